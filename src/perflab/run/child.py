"""The measured process: ``python -m perflab.run.child RUN_DIR/spec.json``.

Starts the engine, runs an uncounted warm-up batch, then the counted batch(es), and writes
``result.json``.  Each counted batch is bracketed by a handshake with the supervisor, which
snapshots the CPU counters of the whole process tree while the tree is idle.
"""

from __future__ import annotations

import json
import os
import resource
import sys
import time
from pathlib import Path
from typing import Any

from perflab.engines import ENGINES
from perflab.engines.base import BatchEngine, Engine, ExecutorEngine
from perflab.files import atomic_write
from perflab.run import T_IMPORT, teardown
from perflab.run.supervisor import EVENT_FDS_ENV
from perflab.spec import RunSpec
from perflab.workloads import WORKLOADS
from perflab.workloads.base import Workload

#: parsl-perf's rule: a batch shorter than this fraction of the target is re-sized and rerun.
ESTIMATE_FRACTION = 0.75
MAX_ESTIMATES = 8


class Window:
    """Tells the supervisor when a counted batch starts and ends, and waits for its ack."""

    def __init__(self) -> None:
        fds = os.environ.get(EVENT_FDS_ENV)
        self.fds = tuple(int(x) for x in fds.split(",")) if fds else None

    def mark(self, kind: str, wid: int) -> None:
        if self.fds is None:
            return
        os.write(self.fds[0], f"{kind} {wid}\n".encode())
        os.read(self.fds[1], 1)


def run_batch(engine: Engine, workload: Workload, n: int) -> dict[str, Any]:
    """One batch of ``n`` tasks: a batch engine runs it whole, its own way (then finishes
    what it left running, outside the window); an executor takes the workload's callables."""
    if isinstance(engine, BatchEngine):
        return engine.run_batch(workload, n)
    assert isinstance(engine, ExecutorEngine)
    return workload.run_batch(engine, n)


def run_window(engine: Engine, workload: Workload, n: int, splits: int) -> dict[str, Any]:
    """The counted batch of ``n`` tasks, run as ``splits`` consecutive sub-batches when asked
    (each one's tasks and wall time kept under ``splits``); the whole is timed as one."""
    if splits <= 1 or n < splits:
        return run_batch(engine, workload, n)
    sizes = [n // splits + (1 if i < n % splits else 0) for i in range(splits)]
    t0 = time.perf_counter()
    subs = [run_batch(engine, workload, m) for m in sizes]
    wall = time.perf_counter() - t0
    return {
        "tasks": n,
        "wall_s": wall,
        "submit_s": sum(s["submit_s"] for s in subs),
        "first_result_s": subs[0]["first_result_s"],
        "splits": [{"tasks": s["tasks"], "wall_s": s["wall_s"]} for s in subs],
    }


def settle(engine: Engine) -> None:
    if isinstance(engine, BatchEngine):
        engine.settle()


def measure_batches(engine: Engine, workload: Workload, spec: RunSpec) -> dict[str, Any]:
    window = Window()
    clock = {"warmup": time.time()}
    workload.batch_label = "warmup"
    warm = run_batch(engine, workload, spec.warmup) if spec.warmup > 0 else None
    settle(engine)
    batches: list[dict[str, Any]] = []

    def counted(n: int) -> dict[str, Any]:
        wid = len(batches)
        window.mark("start", wid)
        started = time.time()
        self_before = resource.getrusage(resource.RUSAGE_SELF)
        workload.batch_label = f"batch{wid}"
        b = run_window(engine, workload, n, spec.window_splits)
        self_after = resource.getrusage(resource.RUSAGE_SELF)
        ended = time.time()
        window.mark("end", wid)
        settle(engine)
        # The submit side's own share, so the tree's total can be compared with it.
        b.update(
            window=wid,
            ended_at=ended,
            started_at=started,
            submit_side_cpu_s=(self_after.ru_utime + self_after.ru_stime)
            - (self_before.ru_utime + self_before.ru_stime),
            submit_side_maxrss_bytes=self_after.ru_maxrss * 1024,
        )
        batches.append(b)
        return b

    if spec.tasks is not None:
        final = counted(spec.tasks)
    else:
        assert spec.time_s is not None
        target = spec.time_s
        rate = warm["tasks"] / warm["wall_s"] if warm else 10.0 / target
        while True:
            final = counted(max(1, int(target * rate)))
            rate = final["tasks"] / final["wall_s"]
            if final["wall_s"] >= ESTIMATE_FRACTION * target or len(batches) >= MAX_ESTIMATES:
                break
    clock.update(window_start=final["started_at"], window_end=final["ended_at"])
    return {"final": final, "warmup": warm, "batches": batches, "clock": clock}


def main(argv: list[str]) -> int:
    t_main = time.time()
    spec_path = Path(argv[1])
    run_dir = spec_path.parent
    spec = RunSpec.from_dict(json.loads(spec_path.read_text()))
    assert spec.workload is not None
    workload = WORKLOADS.get(spec.workload)(spec.params)
    engine = ENGINES.get(spec.target)(run_dir, spec.engine_options, spec.parsl_config)
    engine.allow_insecure = spec.allow_insecure
    if "timeline" in spec.profile:
        workload.timeline = []
    workload.prepare()  # before the engine's processes compete for the cores
    engine.begin()
    try:
        workload.started(run_dir)
        # an engine's own per-task record (Dask's task stream) beside the workload's
        streamer = engine if isinstance(engine, ExecutorEngine) else None
        if workload.timeline is None:
            streamer = None
        if streamer is not None:
            streamer.task_stream_begin()
        result = measure_batches(engine, workload, spec)
        result["env"] = engine.record_env()
        stream = streamer.task_stream_end() if streamer is not None else None
    finally:
        # nothing after the window is recorded: unless the run wants a clean shutdown,
        # the supervisor kills the tree once the result is written
        fast = teardown.fast(spec, engine, workload) and sys.exc_info()[0] is None
        if not fast:
            engine.shutdown()
    result["clock"].update(module=T_IMPORT, main=t_main, down=time.time())
    result["teardown"] = "killed" if fast else "graceful"
    if workload.timeline is not None:
        atomic_write(run_dir / "timeline.json", json.dumps(workload.timeline))
    if stream is not None:
        atomic_write(run_dir / "engine_stream.json", json.dumps(stream))
    atomic_write(run_dir / "result.json", json.dumps(result))
    if fast:
        teardown.leave(Window())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
