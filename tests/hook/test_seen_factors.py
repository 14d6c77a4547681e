"""env, wrapper, rundir and startup factors on a command: each gets its proof from what the
command's Python processes saw at start-up, or the run fails with the cause
(perflab/hook/seen.py)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import userprogram

from perflab import measure
from perflab.hook import judge
from perflab.hook.seen import filesystem, seen_ops

work = userprogram.work  # the fixture: the user's folder with the apps
_spec = userprogram.spec_for


def _proc(pid: int, **kw) -> dict:
    return {"fact": "process", "pid": pid, "argv0": "app.py", **kw}


def test_the_factors_effects_become_the_hooks_checks(work: Path) -> None:
    spec = _spec(work, "python plain_app.py", "startup_safe_path,sched_batch,cfg_rundir_ramfs")
    assert spec.hook["startup_safe_path"] == [
        {"on": "env", "var": "PYTHONSAFEPATH", "value": "1"},
        {"on": "env", "var": "PYTHONNOUSERSITE", "value": "1"},
    ]
    assert spec.hook["sched_batch"] == [{"on": "wrapper", "setting": "policy", "value": "batch"}]
    rundir = spec.hook["cfg_rundir_ramfs"]
    assert rundir[0] == {"on": "rundir", "path": "/dev/shm"}
    assert rundir[1]["arg"] == "run_dir" and rundir[1]["if_built"] is True
    # the effects themselves are applied as before
    assert spec.env["PYTHONSAFEPATH"] == "1" and spec.wrapper[:2] == ["chrt", "--batch"]


def test_an_env_value_the_processes_did_not_see_fails_with_what_they_saw() -> None:
    ops = {"f": seen_ops({"env": {"X": "1"}})}
    treated, causes = judge(ops, [], [_proc(7, env={"X": "1"}), _proc(8, env={"X": None})])
    assert causes == [] and [e["process"]["pid"] for e in treated["f"]] == [7]
    treated, causes = judge(ops, [], [_proc(8, env={"X": "0"})])
    assert treated == {} and causes == ["f: app.py (pid 8) saw {'X': '0'}, not {'X': '1'}"]
    # a search path the hook (or a start-up bundle) put its own folder before
    ops = {"p": seen_ops({"env": {"PYTHONPATH": "/a:/b"}})}
    _, causes = judge(ops, [], [_proc(9, env={"PYTHONPATH": "/hook:/a:/b"})])
    assert causes == []


def test_a_command_without_python_is_proven_by_its_launch_only() -> None:
    treated, causes = judge({"f": seen_ops({"env": {"X": "1"}, "wrapper": {"nice": 5}})}, [], [])
    assert causes == []
    assert all(e["seen_by"].startswith("perflab's launch") for e in treated["f"])
    # a start-up factor reaches Python processes only
    _, causes = judge({"s": seen_ops({"startup": {"trim_path": True}})}, [], [])
    assert causes and "start-up factors reach Python only" in causes[0]


def test_a_wrapper_is_proven_by_the_scheduling_the_process_ran_with() -> None:
    base = os.getpriority(os.PRIO_PROCESS, 0)
    ops = {"n": seen_ops({"wrapper": {"nice": 3, "cpus": "0"}})}
    good = _proc(5, nice=min(19, base + 3), policy="other", cpus=[0])
    treated, causes = judge(ops, [], [good])
    assert causes == [] and treated["n"][0]["scheduled"]["cpus"] == [0]
    _, causes = judge(ops, [], [_proc(6, nice=base, policy="other", cpus=[0, 1])])
    assert causes and causes[0].startswith("n: app.py (pid 6) ran with")


def test_a_rundir_factor_needs_the_run_directory_and_the_programs_parsl_run_dir_under_it(
    tmp_path: Path,
) -> None:
    ops = {"r": seen_ops({"rundir": str(tmp_path)})}
    run_dir = tmp_path / "perflab-0" / "abc"
    treated, causes = judge(ops, [], [], run_dir)
    assert causes == [] and treated["r"][0]["path"] == os.path.realpath(run_dir)
    _, causes = judge(ops, [], [], Path("/elsewhere/abc"))
    assert causes == [f"r: the run directory /elsewhere/abc is not under {tmp_path}"]
    # a Parsl program: its Config built but its run_dir left where it was fails the factor
    config = {"fact": "created", "class": "Config", "pid": 1, "argv0": "app.py"}
    _, causes = judge(ops, [], [config], run_dir)
    assert causes == ["r: the program's Parsl Config was built, but its run_dir was not moved"]
    assert filesystem("/proc") == "proc"


@pytest.mark.slow
def test_env_wrapper_rundir_and_startup_proven_in_a_parsl_workflow(work: Path) -> None:
    factors = "startup_safe_path,sched_batch,cfg_rundir_ramfs,startup_trim_path"
    rec = measure(_spec(work, "python parsl_app.py 100", factors, metric="wall_s", timeout_s=240))
    assert rec.status == "ok", rec.error
    treated = rec.measurement["treated"]
    assert sorted(treated) == sorted(factors.split(","))
    roles = {"parsl_app.py", "interchange.py", "process_worker_pool.py"}
    for name in ("startup_safe_path", "sched_batch", "startup_trim_path"):
        assert {e["process"]["argv0"] for e in treated[name]} >= roles, name
    assert all(e["scheduled"]["policy"] == "batch" for e in treated["sched_batch"])
    assert all(e["trim_path"] for e in treated["startup_trim_path"])
    # the program's own runinfo moved into the tmpfs run directory, not the user's folder
    moved = {e.get("object"): e for e in treated["cfg_rundir_ramfs"]}
    assert moved["perflab run directory"]["filesystem"] == "tmpfs"
    assert moved["DataFlowKernel"]["run_dir"].startswith("/dev/shm/")
    assert not (work / "runinfo").exists()
    assert rec.measurement["program_logs"]["run_dirs"] == [moved["DataFlowKernel"]["run_dir"]]
