"""``scripts/slurm``'s own throwaway clusters (issue 42): a tune over its two nodes then the
command SIGTERMed leaves nothing; SIGKILLed, it leaves what ``--cleanup`` removes.

Apart from tests/batch/test_cluster.py (whose tests share one 4-node cluster): each test here
starts a cluster of its own, so with ``--dist loadfile`` the two files run side by side.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

from clusterkit import (
    CLUSTER_MARKS,
    cli_env,
    leftovers,
    run_perflab,
    where,
    write_config,
    write_score,
)
from conftest import ROOT
from perflab.analysis import hostshare
from perflab.batch import netns
from perflab.batch.slurm import marked
from perflab.campaign.store import Store

pytestmark = CLUSTER_MARKS


class _Command:
    """``scripts/slurm --nodes 2`` running: its owner's PID, what it printed, its files."""

    def __init__(self) -> None:
        cmd = [str(ROOT / "scripts" / "slurm"), "--nodes", "2"]
        self.env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "PYTHON": sys.executable}
        self.proc = subprocess.Popen(cmd, env=self.env, stdout=subprocess.PIPE, text=True)
        assert self.proc.stdout is not None
        self.conf = self.proc.stdout.readline().strip().split("=", 1)[1]
        said = self.proc.stdout.readline()
        assert "# throwaway Slurm" in said, said
        found = re.search(r"controller (\S+):\d+", said)
        assert found, said
        self.addr, self.root = found.group(1), str(Path(self.conf).parent)
        self.daemons = [p.pid for p in marked(self.root)
                        if p.name() in ("slurmctld", "slurmd", "munged")]  # fmt: skip
        assert len(self.daemons) == 4 and all(netns.owned(self.proc.pid))

    def left(self) -> list[str]:
        return leftovers(self.proc.pid, self.root, self.daemons)

    def kill(self, sig: signal.Signals) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        self.proc.wait(timeout=60)

    def cleanup(self) -> None:
        clean = subprocess.run([str(ROOT / "scripts" / "slurm"), "--cleanup"], env=self.env,
                               capture_output=True, timeout=120)  # fmt: skip
        assert clean.returncode == 0, clean.stderr


def test_a_tune_over_two_nodes_then_the_command_sigtermed_leaves_nothing(tmp_path: Path) -> None:
    """``scripts/slurm --nodes 2``, and in another process ``perflab tune --runner parsl``
    over its 2 nodes (one exclusive node per measurement): every record names its node, job
    and step, both nodes measured, no two runs on one node at once. The command SIGTERMed
    then stops everything itself."""
    command = _Command()
    try:
        write_score(tmp_path)
        write_config(tmp_path / "slurm.py", command.addr, "perflab", 2)
        env = cli_env(tmp_path, {"SLURM_CONF": command.conf})
        proc = run_perflab(tmp_path, env, "tune", "t", "--command", "./score.sh", "--factors",
                        "a,b", "--budget", "26", "--pairs", "3", "--search", "staged",
                        "--metric", "us_per_task",
                        "--runner", "parsl", "--runner-config", "slurm.py",
                        "--store", str(tmp_path / "s.db"), "--json", timeout=900)  # fmt: skip
        assert proc.returncode == 0, proc.stderr[-2000:]
        result = json.loads(proc.stdout.strip().splitlines()[-1])
        store = Store(tmp_path / "s.db")
        stages = [n for n in store.campaign_names() if n.startswith("t.")]
        records = [r for n in stages for r in store.records(n)]
        # the tune spends at most its budget and finds the two factors that help
        assert len(records) == result["runs"] <= 26 and set(result["best_set"]) == {"a", "b"}
        assert {r.env["runner"]["provider"] for r in records} == {"SlurmProvider"}
        where(records, ["node1", "node2"])
        assert {r.env["batch"]["node"] for r in records} == {"node1", "node2"}
        assert hostshare.summary(records)["pairs"] == []
        print(
            f"\ntune over 2 nodes: {len(records)} runs in {len(stages)} stages, best set "
            f"{result['best_set']}, jobs {sorted({r.env['batch']['job_id'] for r in records})}"
        )
    finally:
        command.kill(signal.SIGTERM)
    assert command.left() == []


def test_the_sigkilled_cluster_command_leaves_what_cleanup_removes() -> None:
    """SIGKILLed, its daemons, namespaces, veths and bridge outlive it, named after its PID,
    and ``--cleanup`` removes every one of them."""
    command = _Command()
    try:
        command.kill(signal.SIGKILL)
        assert command.left(), "nothing could stop them"
    finally:
        command.cleanup()
    assert command.left() == []
