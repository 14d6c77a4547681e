"""``compute``: independent tasks of a calibrated counted loop (Task Bench's compute kernel).

``task_us`` is converted to loop iterations with the rate measured in the measured process
before the engine starts, so the ideal time is exact work ÷ cores: the workload METG sweeps.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from perflab.options import Opt
from perflab.workloads import WORKLOADS
from perflab.workloads.base import parallel_ideal
from perflab.workloads.kernel import KERNEL_OPT, TASK_US_HELP, KernelWorkload, spin


def compute_task(iters: int, kind: str = "hash") -> int:
    spin(iters, kind)
    return iters


@WORKLOADS.register
class Compute(KernelWorkload):
    name = "compute"
    params = {"task_us": Opt(default=1000.0, help=TASK_US_HELP), "kernel": KERNEL_OPT}

    def function(self) -> Callable[..., Any]:
        return compute_task

    def args(self) -> tuple[Any, ...]:
        return (self.iters(), str(self.p["kernel"]))

    def check(self, result: Any) -> bool:
        return bool(result == self.iters())

    def ideal_s(self, results: list[Any], slots: int) -> float | None:
        task_s = self.iters() / self.rate if self.rate else 0.0
        return parallel_ideal(len(results) * task_s, task_s, slots)

    def details(self, results: list[Any], wall_s: float, slots: int) -> dict[str, Any]:
        return {
            "kernel": self.p["kernel"],
            "kernel_rate_per_s": self.rate,
            "iters_per_task": self.iters(),
        }
