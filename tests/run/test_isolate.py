"""``--isolate``: the measured tree in a cgroup of its own (proof read back from
``/proc/PID/cgroup``), removed after the run and after perflab is killed; without the rights
one line says why and nothing runs (played as uid nobody)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

import perflab.cli  # noqa: F401  (registers the verbs)
from attacker import as_nobody, needs_root
from perflab.cli.app import main
from perflab.errors import PerflabError
from perflab.run import isolate
from perflab.run.measure import measure
from perflab.spec import RunSpec


def can_isolate() -> bool:
    try:
        isolate.check("on")
    except PerflabError:
        return False
    return True


needs_cgroups = pytest.mark.skipif(not can_isolate(), reason="no cgroup perflab may write here")


def ours() -> list[str]:
    version, bases = isolate.backend(None)
    return [
        d.name for b in bases for d in b.iterdir() if d.name.startswith(f"perflab-{os.getpid()}-")
    ]


def test_the_setting_is_parsed_and_bad_input_named() -> None:
    assert isolate.parse("on") is None and isolate.parse("") is None
    assert isolate.parse("cpus=0") == "0"
    for bad in ("cpus=", "cpus=a", "fast", "cpus=1-0"):
        with pytest.raises(PerflabError, match="--isolate"):
            isolate.parse(bad)
    with pytest.raises(PerflabError, match="not among"):
        isolate.parse("cpus=4096")


def test_a_cgroup_without_the_cpu_controller_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "cgroup.controllers").write_text("memory pids\n")
    monkeypatch.setenv(isolate.DELEGATED_ENV, str(tmp_path))
    with pytest.raises(PerflabError, match="no cpu controller"):
        isolate.check("on")


@needs_cgroups
def test_the_measured_tree_runs_in_its_own_cgroup_and_it_is_removed(tmp_path: Path) -> None:
    # the command reads its own cgroup: the proof from inside, besides the supervisor's
    cmd = "cat /proc/self/cgroup >&2; echo 1000"
    spec = RunSpec(command=cmd, isolate="cpus=0", run_root=str(tmp_path), keep_run_dir=True)
    rec = measure(spec)
    assert rec.status == "ok", rec.error
    iso = rec.measurement["isolation"]
    assert iso["proof"]["inside"] and iso["removed"] and iso["cpus"] == "0", json.dumps(iso)
    name = Path(iso["dirs"][0]).name
    own = (tmp_path / rec.run_id / "stderr.txt").read_text()
    assert name in own  # the command's own process (a grandchild of bash) is inside too
    assert all(not Path(d).exists() for d in iso["dirs"]) and ours() == []


@needs_cgroups
def test_the_cgroup_is_removed_when_perflab_is_killed(tmp_path: Path) -> None:
    env = {**os.environ, "PERFLAB_HOME": str(tmp_path)}
    cmd = [sys.executable, "-m", "perflab", "run", "--command", "sleep 30", "--isolate"]
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    version, bases = isolate.backend(None)
    prefix = f"perflab-{proc.pid}-"
    end = time.monotonic() + 30
    while time.monotonic() < end and not any(
        d.name.startswith(prefix) for b in bases for d in b.iterdir()
    ):
        time.sleep(0.1)
    made = [d for b in bases for d in b.iterdir() if d.name.startswith(prefix)]
    assert made, "the run's cgroup never appeared"
    # killed between making the cgroup and starting the run, the next run sweeps it
    # (test_a_stale_cgroup_of_a_dead_perflab_is_swept); here the run is under way
    while time.monotonic() < end and not (made[0] / "cgroup.procs").read_text().strip():
        time.sleep(0.1)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    end = time.monotonic() + 20  # the supervisor outlives perflab: it ends the tree, then this
    while time.monotonic() < end and any(d.exists() for d in made):
        time.sleep(0.1)
    assert not any(d.exists() for d in made)


@needs_cgroups
def test_a_stale_cgroup_of_a_dead_perflab_is_swept(tmp_path: Path) -> None:
    version, bases = isolate.backend(None)
    stale = bases[0] / "perflab-999999999-abc123"
    stale.mkdir()
    try:
        assert stale.name in isolate.sweep(bases)
    finally:
        if stale.exists():
            stale.rmdir()


@needs_root
def test_without_the_rights_one_line_and_nothing_runs(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    tmp_path.chmod(0o777)
    out = as_nobody(
        f"""
        from click.testing import CliRunner
        from perflab.cli.app import main
        import os
        os.environ["PERFLAB_HOME"] = "{tmp_path}/home"
        res = CliRunner().invoke(main, ["run", "--command", "touch {marker}", "--isolate"])
        report(code=res.exit_code, out=res.output)
        """,
        preimport=(
            "perflab.cli",
            "perflab.cli.app",
            "perflab.run.measure",
            "perflab.cli.run",
            "statistics",
            "fractions",
            "click.testing",
        ),
    )
    lines = out["out"].strip().splitlines()
    assert out["code"] == 2 and len(lines) == 1, out
    assert "--isolate" in lines[0] and "may not make cgroups" in lines[0]
    assert not marker.exists()


def test_the_option_reaches_the_spec_and_a_bad_value_is_one_line(tmp_path: Path) -> None:
    res = CliRunner().invoke(
        main,
        ["run", "--command", "true", "--isolate", "cpus=zz"],
        env={"PERFLAB_HOME": str(tmp_path)},
    )
    assert res.exit_code == 2 and "--isolate" in res.output
    assert len(res.output.strip().splitlines()) == 1
    assert json.dumps(RunSpec(isolate="on").to_dict())  # round-trips to the measuring child
