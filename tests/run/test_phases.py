"""measurement.phases (where a run's time goes) and the fast teardown after the last window."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from conftest import alive
from perflab import RunSpec, measure
from perflab.run import phases
from perflab.run.phases import ENGINE_PHASES


def test_phases_add_up_and_missing_stamps_give_their_time_to_the_next() -> None:
    stamps = {"begin": 10.0, "launch": 10.5, "main": 11.0, "window_end": 13.0, "end": 14.0}
    got = phases.phases(stamps, command=False)
    assert got["prepare"] == 0.5
    assert got["interpreter"] == 0.0  # no "module" stamp: its time goes to "imports"
    assert got["imports"] == 0.5
    assert got["window"] == 2.0
    assert got["record"] == 1.0
    assert sum(v for k, v in got.items() if k != "total") == pytest.approx(got["total"])
    assert got["total"] == 4.0


def test_a_stamp_out_of_order_counts_nothing_rather_than_a_negative_time() -> None:
    got = phases.phases({"begin": 0.0, "launch": 2.0, "main_exit": 1.0, "end": 3.0}, True)
    assert got == {"prepare": 2.0, "command": 0.0, "reap": 0.0, "record": 1.0, "total": 3.0}


def test_window_share_from_record_timestamps() -> None:
    recs = [
        {"started_at": "2026-01-01T00:00:00+00:00", "ended_at": "2026-01-01T00:00:04+00:00",
         "measurement": {"window_s": 1.0}},
        {"started_at": "2026-01-01T00:00:05+00:00", "ended_at": "2026-01-01T00:00:10+00:00",
         "measurement": {"window_s": 4.0}},
    ]  # fmt: skip
    share = phases.window_share(recs)
    assert share == {"runs": 2, "wall_s": 10.0, "window_s": 5.0, "share": 0.5}


def _check_phases(rec: object, elapsed: float, names: tuple[str, ...]) -> dict[str, float]:
    ph = rec.measurement["phases"]  # type: ignore[attr-defined]
    assert set(ph) == {*names, "total"}
    assert all(v >= 0 for v in ph.values())
    assert sum(v for k, v in ph.items() if k != "total") == pytest.approx(ph["total"])
    # the phases cover measure() from its first line to its last: the caller's elapsed time
    assert ph["total"] <= elapsed
    assert ph["total"] == pytest.approx(elapsed, rel=0.2, abs=0.05)
    return dict(ph)


def test_command_run_has_its_phases(run_root: str) -> None:
    t0 = time.time()
    rec = measure(RunSpec(metric="us_per_task", command="echo 5", run_root=run_root))
    elapsed = time.time() - t0
    assert rec.status == "ok", rec.error
    ph = _check_phases(rec, elapsed, ("prepare", "command", "reap", "record"))
    assert ph["command"] == pytest.approx(rec.wall_s, abs=0.02)
    assert "teardown" not in rec.measurement


@pytest.mark.slow
@pytest.mark.parametrize("graceful", [False, True])
def test_engine_run_phases_and_teardown(graceful: bool, run_root: str) -> None:
    spec = RunSpec(
        target="cf-processes", workload="noop", tasks=300, run_root=run_root, graceful=graceful
    )
    t0 = time.time()
    rec = measure(spec)
    elapsed = time.time() - t0
    assert rec.status == "ok", rec.error
    ph = _check_phases(rec, elapsed, tuple(name for name, _ in ENGINE_PHASES))
    assert ph["window"] == pytest.approx(rec.measurement["window_s"], abs=0.02)
    m = rec.measurement
    assert m["teardown"] == ("graceful" if graceful else "killed")
    assert m["outlived"] == [] and m["survivors"] == []
    assert rec.tasks == 300
    assert not alive(m["pids_seen"])


@pytest.mark.slow
def test_htex_tree_is_killed_after_the_window_and_nothing_is_left(run_root: str) -> None:
    rec = measure(RunSpec(target="parsl-htex", workload="noop", tasks=200, run_root=run_root))
    assert rec.status == "ok", rec.error
    m = rec.measurement
    assert m["teardown"] == "killed"
    assert m["outlived"] == [] and m["survivors"] == []
    # supervisor's child, interchange, pool manager, workers: all seen, none alive
    assert len(m["pids_seen"]) >= 4
    assert not alive(m["pids_seen"])
    assert m["phases"]["worker_connect"] > 0  # the warm-up waited for the workers


def test_a_profiled_or_shutdown_measuring_run_shuts_down_cleanly(run_root: str) -> None:
    from perflab.engines.base import ExecutorEngine
    from perflab.run import teardown
    from perflab.workloads.base import Workload

    class Abandonable(ExecutorEngine):
        def abandonable(self) -> bool:
            return True

    class Measuring(Workload):
        measures_shutdown = True

    spec = RunSpec(target="cf-threads", workload="noop", tasks=10)
    engine, plain = Abandonable(Path(run_root)), ExecutorEngine(Path(run_root))
    assert teardown.fast(spec, engine, Workload())
    assert not teardown.fast(spec, engine, Measuring())
    assert not teardown.fast(RunSpec(profile=["timeline"]), engine, Workload())
    # the base's declared defaults: an engine must say so, a workload need not
    assert not teardown.fast(spec, plain, Workload())


SPAWNER = """
import json, multiprocessing as mp, os, time
ctx = mp.get_context("spawn")
q = ctx.Queue()  # named semaphores, registered with a resource tracker
p = ctx.Process(target=time.sleep, args=(600,))
p.start()
print(json.dumps([q._rlock._semlock.name, q._sem._semlock.name, p.pid]), flush=True)
ev, ack = (int(x) for x in os.environ["PERFLAB_EVENT_FDS"].split(","))
os.write(ev, b"done 0\\n")
os.read(ack, 1)
os._exit(0)
"""


def test_killed_tree_leaves_no_process_and_no_named_semaphore(tmp_path: Path) -> None:
    import json
    import sys

    from perflab.files import create_private
    from perflab.run.launch import Supervisor

    run_dir = tmp_path / "run"
    run_dir.mkdir(mode=0o700)
    job = {
        "argv": [sys.executable, "-c", SPAWNER],
        "env": dict(os.environ),
        "run_dir": str(run_dir),
        "cwd": str(run_dir),
        "timeout_s": 60,
        "windows": True,
        "sample_interval_s": 0.2,
    }
    create_private(run_dir / "job.json", json.dumps(job))
    assert Supervisor(run_dir / "job.json").wait(90) == 0
    sup = json.loads((run_dir / "supervisor.json").read_text())
    *names, child = json.loads((run_dir / "stdout.txt").read_text())
    assert sup["killed"] and sup["returncode"] == 0 and sup["survivors"] == []
    # the spawned child and the resource tracker were in the tree, and are gone
    assert len(sup["seen"]) >= 3
    assert not alive(sup["seen"]) and child in [pid for pid, _ in sup["seen"]]
    for name in names:  # the tracker unlinked them once the others were dead
        assert not Path("/dev/shm", "sem." + name.lstrip("/")).exists(), name
