"""Dependency patterns from Task Bench, submitted through each engine's own mechanism.

A pattern builds its graph with ``Dependent(engine).submit_after(fn, deps, ...)``: Parsl and
Dask get futures as arguments (their own dependency resolution), concurrent.futures pools get
callback chaining.  Every task runs the calibrated compute kernel for ``task_us`` and
returns 1 + the largest of its inputs, so each sink's value is its depth: a wrong value
means a dependency was not honoured, and fails the run.

Ideal time = max(critical path, total work ÷ cores); ``latency_per_level_s`` = (wall −
critical-path work) ÷ depth is what each dependency level costs beyond its work.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar

from perflab.options import Opt
from perflab.tasks import Executor
from perflab.tasks.depend import Dependent
from perflab.workloads.base import batch_summary, cpu_slots, parallel_ideal
from perflab.workloads.kernel import KERNEL_OPT, TASK_US_HELP, KernelWorkload, spin

Submit = Callable[..., Any]


def dag_task(iters: int, kind: str, *deps: int) -> int:
    spin(iters, kind)
    return 1 + max(deps, default=0)


@dataclass
class Graph:
    """What a pattern built: the futures to wait for and the graph's shape."""

    sinks: list[Any]
    tasks: int
    depth: int


class DagWorkload(KernelWorkload):
    """A dependency pattern of ``n`` tasks (a pattern may round n to its shape)."""

    needs_dependencies: ClassVar[bool] = True
    params: ClassVar[dict[str, Opt]] = {
        "task_us": Opt(default=0.0, help=TASK_US_HELP),
        "kernel": KERNEL_OPT,
    }

    graph: Graph | None = None

    def build(self, after: Submit, n: int, slots: int) -> Graph:
        raise NotImplementedError

    def run_batch(self, engine: Executor, n: int) -> dict[str, Any]:
        iters, kind = self.iters(), str(self.p["kernel"])
        dependent = Dependent(engine)

        def after(deps: list[Any]) -> Any:
            return dependent.submit_after(dag_task, deps, iters, kind)

        t0 = time.perf_counter()
        try:
            graph = self.graph = self.build(after, n, cpu_slots(engine))
            t_submitted = time.perf_counter()
            first: float | None = None
            for fut in graph.sinks:
                value = fut.result()
                first = first or time.perf_counter()
                if value != graph.depth:
                    raise RuntimeError(
                        f"{self.name}: a sink returned depth {value}, expected {graph.depth} "
                        "(a dependency was not honoured)"
                    )
            t1 = time.perf_counter()
        finally:
            dependent.close()
        return batch_summary(self, engine, [], graph.tasks, (t0, t_submitted, first, t1))

    def task_s(self) -> float:
        return self.iters() / self.rate if self.rate else 0.0

    def ideal_s(self, results: list[Any], slots: int) -> float | None:
        assert self.graph is not None
        w = self.task_s()
        return parallel_ideal(self.graph.tasks * w, self.graph.depth * w, slots)

    def details(self, results: list[Any], wall_s: float, slots: int) -> dict[str, Any]:
        assert self.graph is not None
        g, w = self.graph, self.task_s()
        return {
            "pattern": self.name,
            "depth": g.depth,
            "kernel_rate_per_s": self.rate,
            "critical_path_s": g.depth * w,
            "latency_per_level_s": (wall_s - g.depth * w) / g.depth,
        }
