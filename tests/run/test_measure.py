"""Real engines, real processes: one run each, checked against what the record claims."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from conftest import alive, perflab_json
from perflab import RunSpec, measure
from perflab.run.record import METRICS

pytestmark = pytest.mark.slow


def test_htex_record_counts_the_whole_process_tree(run_root: str) -> None:
    rec = perflab_json(
        "run",
        "--target",
        "parsl-htex",
        "--workload",
        "noop",
        "--time",
        "2",
        "--run-root",
        run_root,
    )
    assert rec["status"] == "ok", rec["error"]
    for key in METRICS:
        assert rec[key] is not None, key
    m = rec["measurement"]
    # A submit process alone could not account for this: the interchange and the worker
    # pool's processes must be in the totals.
    tree_cpu = rec["cpu_user_s"] + rec["cpu_sys_s"]
    assert tree_cpu > 1.2 * m["submit_side_cpu_s"], (tree_cpu, m["submit_side_cpu_s"])
    assert rec["peak_rss_bytes"] > 1.5 * m["submit_side_maxrss_bytes"]
    cores = os.cpu_count() or 1
    assert rec["utilization"] > m["submit_side_cpu_s"] / (m["window_s"] * cores)
    # supervisor, child, interchange, pool manager and workers
    assert len(m["pids_seen"]) >= 4
    assert rec["log_bytes"] > 0  # parsl.log, interchange.log in the run directory
    assert rec["tasks"] * rec["us_per_task"] == pytest.approx(rec["wall_s"] * 1e6)
    assert rec["env"]["packages"]["parsl"]
    assert rec["env"]["cores"] == cores
    assert not alive(m["pids_seen"])


@pytest.mark.parametrize("target", ["cf-threads", "cf-processes", "parsl-threads", "dask"])
def test_engines_run_exactly_n_tasks(target: str, run_root: str) -> None:
    rec = measure(RunSpec(target=target, workload="noop", tasks=200, run_root=run_root))
    assert rec.status == "ok", rec.error
    assert rec.tasks == 200
    assert rec.us_per_task and rec.us_per_task > 0
    assert rec.submit_s is not None and rec.first_result_s is not None
    assert rec.first_result_s <= rec.wall_s  # type: ignore[operator]
    assert not alive(rec.measurement["pids_seen"])


def test_sleep_workload_takes_its_time(run_root: str) -> None:
    rec = measure(
        RunSpec(
            target="cf-threads",
            workload="sleep",
            tasks=20,
            warmup=0,
            params={"task_ms": 50},
            engine_options={"workers": 2},
            run_root=run_root,
        )
    )
    assert rec.status == "ok", rec.error
    # 20 tasks of 50 ms on 2 workers cannot take less than 0.5 s
    assert rec.wall_s is not None and rec.wall_s >= 0.5


def test_engine_that_hangs_and_ignores_sigterm_is_killed(run_root: str) -> None:
    t0 = time.monotonic()
    rec = measure(
        RunSpec(
            target="parsl-htex",
            workload="hang",
            params={"ignore_term": 1},
            tasks=4,
            warmup=0,
            timeout_s=20,  # long enough for the interchange and workers to start under load
            run_root=run_root,
            engine_options={"workers": 2},
        )
    )
    elapsed = time.monotonic() - t0
    assert rec.status == "timeout"
    assert "timed out" in (rec.error or "")
    assert elapsed < 20 + 15
    assert rec.measurement["survivors"] == []
    # the interchange and workers (which ignore SIGTERM) were started, and none is alive now
    assert len(rec.measurement["pids_seen"]) >= 3
    assert not alive(rec.measurement["pids_seen"])
    assert Path(rec.measurement["run_dir"]).is_dir()  # kept for inspection


def test_command_ignoring_sigterm_times_out_and_is_killed(run_root: str) -> None:
    t0 = time.monotonic()
    rec = measure(
        RunSpec(
            metric="us_per_task",
            command="trap '' TERM; sleep 600 & sleep 600; wait",
            timeout_s=2,
            run_root=run_root,
        )
    )
    assert rec.status == "timeout"
    assert time.monotonic() - t0 < 2 + 10
    assert not alive(rec.measurement["pids_seen"])


def test_detached_process_that_outlives_the_run_is_reported_and_killed(run_root: str) -> None:
    rec = measure(
        RunSpec(command="setsid sleep 600 & echo 123.5", metric="us_per_task", run_root=run_root)
    )
    assert rec.status == "ok", rec.error
    assert rec.us_per_task == 123.5
    assert rec.tasks_per_s == pytest.approx(1e6 / 123.5)
    outlived = rec.measurement["outlived"]
    assert [p["name"] for p in outlived] == ["sleep"]
    assert not alive(rec.measurement["pids_seen"])


def test_command_gets_treatments_and_json_score(run_root: str) -> None:
    cmd = (
        "python3 -c \"import json,os; t=os.environ['PERFLAB_TREATMENTS']; "
        "print(json.dumps({'tasks_per_s': 2000 if t else 1000, 'tasks': 10}))\""
    )
    spec = RunSpec(command=cmd, metric="tasks_per_s", treatments=["b", "a=1"], run_root=run_root)
    rec = measure(spec)
    assert rec.status == "ok", rec.error
    assert rec.treatments == ["a=1", "b"]
    assert rec.tasks_per_s == 2000 and rec.us_per_task == 500 and rec.tasks == 10
    assert rec.cpu_user_s is not None and rec.peak_rss_bytes


def test_failed_command_is_recorded_with_stderr_tail(run_root: str) -> None:
    rec = measure(RunSpec(metric="us_per_task", command="echo boom >&2; exit 3", run_root=run_root))
    assert rec.status == "failed"
    assert "exit code 3" in (rec.error or "") and "boom" in (rec.error or "")


def test_a_split_window_keeps_each_sub_batch(run_root: str) -> None:
    """``window_splits``: the counted window runs as sub-batches, timed as one, each one's
    tasks and wall time under ``measurement.window_splits`` (for ``perflab precision``)."""
    rec = measure(
        RunSpec(target="cf-threads", tasks=103, warmup=0, window_splits=4, run_root=run_root)
    )
    assert rec.status == "ok", rec.error
    splits = rec.measurement["window_splits"]
    assert [s["tasks"] for s in splits] == [26, 26, 26, 25] and rec.tasks == 103
    assert sum(s["wall_s"] for s in splits) <= rec.wall_s  # type: ignore[operator]
