"""The workload interface: which callable is submitted, with which arguments."""

from __future__ import annotations

import functools
import os
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar

from perflab.errors import PerflabError
from perflab.options import Opt, check_options, defaults
from perflab.registry import refuse_unknown
from perflab.tasks import Executor


def timed_call(fn: Callable[..., Any], *args: Any) -> tuple[Any, int, str, float, float]:
    """Run ``fn(*args)`` inside a worker and return (result, pid, thread, start, end).

    Lives here, beside the task functions, so that a profiled task costs the worker no extra
    import (a timeline must not add file-system calls to the start-up it measures).
    """
    t0 = time.time()
    result = fn(*args)
    t1 = time.time()
    return result, os.getpid(), threading.current_thread().name, t0, t1


class Workload:
    """A kind of task. ``params`` declares its parameters (``Opt``: default, what it accepts,
    help).

    Task functions live at module level so engines pickle them by reference: the workers
    import perflab rather than receiving code.
    """

    name: ClassVar[str] = ""
    params: ClassVar[dict[str, Opt]] = {}
    #: Tasks take earlier tasks' results: only engines that express dependencies run it.
    needs_dependencies: ClassVar[bool] = False
    #: Tasks compute: at most one per core runs at full speed (sleeping tasks do not).
    uses_cores: ClassVar[bool] = True
    #: The workload resolves its tasks' dependencies itself in a manager loop (a workflow):
    #: any ``ExecutorEngine`` (its ``loop()``) runs it, even one without ``dependencies``.
    resolves_dependencies: ClassVar[bool] = False
    #: The engine's shutdown is part of what the workload measures: the run always shuts
    #: down cleanly (``run/teardown``), never by killing its tree.
    measures_shutdown: ClassVar[bool] = False

    def __init__(self, params: dict[str, Any] | None = None) -> None:
        self.p = self.resolve_params(params or {})
        #: Per-task events when the run is profiled with ``timeline`` (None: not recorded).
        self.timeline: list[dict[str, Any]] | None = None
        self.batch_label = ""

    @classmethod
    def resolve_params(cls, params: dict[str, Any]) -> dict[str, Any]:
        """The parameters with their defaults, each turned into its default's type (a
        ``--param`` value may come as text) and checked against its declaration."""
        what = f"workload {cls.name!r}"
        refuse_unknown(what, params, cls.params, "parameter")
        merged = {**defaults(cls.params), **params}
        for key, value in merged.items():
            opt = cls.params[key]
            kind = type(opt.default) if opt.default is not None else opt.type
            try:
                merged[key] = value if kind is object or value is None else kind(value)
            except (TypeError, ValueError):
                raise PerflabError(
                    f"{what}: parameter {key}={value!r} is not a {kind.__name__}"
                ) from None
        check_options(merged, cls.params, what, "parameter")
        return merged

    def function(self) -> Callable[..., Any]:
        raise NotImplementedError

    def args(self) -> tuple[Any, ...]:
        return ()

    def check(self, result: Any) -> bool:
        """Whether a task's result is the one expected (a wrong result fails the run)."""
        return True

    def command(self) -> list[str]:
        """The task as a command line (argv), for job engines (shell, saga)."""
        raise PerflabError(
            f"workload {self.name!r} has no command-line form for job engines "
            "(use exec, noop or sleep)"
        )

    def task_args(self, i: int) -> tuple[Any, ...]:
        """Arguments of the i-th task of a batch (the same for all, unless overridden)."""
        return self.args()

    def prepare(self) -> None:
        """Hook: called in the measured process before the engine starts (calibration)."""

    def started(self, run_dir: Path) -> None:
        """Hook: called in the measured process once the engine has started."""

    def ideal_s(self, results: list[Any], slots: int) -> float | None:
        """The batch's ideal time on ``slots`` cores (None: the workload has no model of its
        work, as for no-op tasks)."""
        return None

    def details(self, results: list[Any], wall_s: float, slots: int) -> dict[str, Any]:
        """Workload-specific facts about a batch, kept in the record's ``measurement``."""
        return {}

    def run_batch(self, engine: Executor, n: int) -> dict[str, Any]:
        """Run ``n`` counted tasks and time them: by default ``n`` independent tasks submitted
        at once and collected as they complete. Workloads with their own submission pattern
        (dependencies, a manager loop) override this and return the same keys."""
        fn = self.function()
        timed = self.timeline is not None
        if timed:
            fn = functools.partial(timed_call, fn)
        batch_start = time.time()
        t0 = time.perf_counter()
        futures = []
        submitted: dict[int, tuple[int, float]] = {}
        for i in range(n):
            fut = engine.submit(fn, *self.task_args(i))
            if timed:
                submitted[id(fut)] = (i, time.time())
            futures.append(fut)
        t_submitted = time.perf_counter()
        first: float | None = None
        results = []
        for fut in engine.as_completed(futures):
            result = fut.result()
            if timed:
                result = self._record(result, submitted[id(fut)], batch_start)
            if first is None:
                first = time.perf_counter()
            if not self.check(result):
                raise RuntimeError(f"task returned {result!r}, not the workload's expected result")
            results.append(result)
        t1 = time.perf_counter()
        return batch_summary(self, engine, results, n, (t0, t_submitted, first, t1))

    def _record(self, timed: Any, sub: tuple[int, float], batch_start: float) -> Any:
        """Keep one task's events (from :func:`timed_call`); return the task's own result."""
        received = time.time()
        result, pid, thread, started, ended = timed
        assert self.timeline is not None
        self.timeline.append(
            {
                "task": sub[0],
                "batch": self.batch_label,
                "batch_start": batch_start,
                "submitted": sub[1],
                "started": started,
                "ended": ended,
                "received": received,
                "pid": pid,
                "thread": thread,
            }
        )
        return result


def cpu_slots(engine: Executor, uses_cores: bool = True) -> int:
    """Tasks that can progress at once: the workers, and no more than the cores for tasks
    that compute."""
    workers = max(1, engine.workers_total())
    return min(workers, os.cpu_count() or 1) if uses_cores else workers


def batch_summary(
    workload: Workload,
    engine: Executor,
    results: list[Any],
    n: int,
    times: tuple[float, float, float | None, float],
) -> dict[str, Any]:
    """A batch's timings (start, end of submission, first result, end) and the workload's
    ideal time and details, as the measured process reports them."""
    t0, t_submitted, first, t1 = times
    slots = cpu_slots(engine, workload.uses_cores)
    return {
        "tasks": n,
        "wall_s": t1 - t0,
        "submit_s": t_submitted - t0,
        "first_result_s": (first if first is not None else t1) - t0,
        "ideal_s": workload.ideal_s(results, slots),
        "details": {"slots": slots, **workload.details(results, t1 - t0, slots)},
    }


def parallel_ideal(total_s: float, longest_s: float, slots: int) -> float:
    """A lower bound of the makespan: the work spread evenly, or its longest chain."""
    return max(total_s / max(1, slots), longest_s)
