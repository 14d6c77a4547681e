"""The series' runs through a campaign runner: ``atlas update --runner parsl --runner-config
slurm.py`` sends every pending run to a real, throwaway Slurm (munged, slurmctld and slurmd on
this machine; each run a Parsl task in a Slurm job's srun step) and keeps each record's value
as it comes back; a runner that does not exist, or has no config, is one line and exit 2 with
nothing stored."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from atlasrepo import SCORE, make_repo, private_home  # noqa: F401
from click.testing import CliRunner

from conftest import ROOT
from perflab.atlas.define import init
from perflab.atlas.project import benchmark
from perflab.cli import main

CONFIG = """
from parsl.config import Config
from parsl.executors import HighThroughputExecutor
from parsl.launchers import SrunLauncher
from parsl.providers import SlurmProvider

config = Config(
    executors=[HighThroughputExecutor(
        label="perflab_runner", address="127.0.0.1", max_workers_per_node=1,
        heartbeat_period=2, heartbeat_threshold=10,
        provider=SlurmProvider(
            partition={partition!r}, nodes_per_block=1, init_blocks=1, min_blocks=0,
            max_blocks=1, exclusive=False, walltime="00:10:00", launcher=SrunLauncher(),
            worker_init="export PATH={bin}:$PATH",
        ),
    )],
    strategy="none", run_dir={run_dir!r},
)
"""


def _atlas(tmp_path: Path, runs: int = 2) -> Path:
    repo = tmp_path / "repo"
    make_repo(repo, n=4)
    d = tmp_path / "atlas"
    init(d, repo, "toyatlas", benchmark("score", SCORE, None, None, "us_per_task", runs=runs))
    return d


def _updates(d: Path) -> int:
    con = sqlite3.connect(d / "atlas.sqlite")
    try:
        return int(con.execute("SELECT count(*) FROM updates").fetchone()[0])
    finally:
        con.close()


@pytest.mark.parametrize(
    "args, says",
    [(["--runner", "nope"], "nope"), (["--runner", "parsl"], "needs a Parsl config file")],
)
def test_a_runner_that_cannot_run_is_one_line_and_stores_nothing(
    tmp_path: Path, args: list[str], says: str
) -> None:
    d = _atlas(tmp_path)
    res = CliRunner().invoke(main, ["atlas", "update", str(d), *args])
    assert res.exit_code == 2, res.output
    assert res.stderr.count("\n") == 1 and says in res.stderr, res.stderr
    assert _updates(d) == 0


@pytest.fixture(scope="module")
def cluster() -> Iterator[object]:
    from perflab.batch.slurm import SlurmCluster

    c = SlurmCluster()  # under $TMPDIR, named after this PID: swept if pytest is SIGKILLed
    c.start()
    try:
        yield c
    finally:
        c.stop()


@pytest.mark.slow
@pytest.mark.skipif(
    shutil.which("slurmctld") is None and not os.path.exists("/usr/sbin/slurmctld"),
    reason="Slurm is not installed (scripts/setup installs it)",
)
def test_the_series_runs_go_through_slurm(tmp_path: Path, cluster: object) -> None:
    runs = 2
    d = _atlas(tmp_path, runs)
    cfg = tmp_path / "slurm.py"
    cfg.write_text(CONFIG.format(partition=cluster.partition,  # type: ignore[attr-defined]
                                 bin=str(Path(sys.executable).parent),
                                 run_dir=str(tmp_path / "runinfo")))  # fmt: skip
    path = f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"
    # PERFLAB_HOME: the test's own (private_home), so the workers find the built trees
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "PATH": path,
           **cluster.env()}  # type: ignore[attr-defined]  # fmt: skip
    proc = subprocess.run(
        [sys.executable, "-m", "perflab", "atlas", "update", str(d), "--runner", "parsl",
         "--runner-config", str(cfg), "--json"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=400,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout)
    assert out["runner"]["name"] == "parsl" and out["runner"]["sent"] == 4 * runs
    assert out["runner"]["where"] == {"SlurmProvider/slurm": 4 * runs}, out["runner"]
    assert out["runs"] == 4 * runs and len(out["measured"]["score"]) == 4
    assert cluster.jobs() == []  # type: ignore[attr-defined]
