"""``imbalanced``: compute tasks whose sizes follow a distribution (Task Bench's imbalance).

Sizes are drawn once per batch from ``dist`` (``uniform``, ``exponential``, ``lognormal``)
with mean ``task_us`` and coefficient of variation ``cv``, seeded by ``seed``; the ideal
time is max(total work ÷ cores, the longest task).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from perflab.options import Opt
from perflab.tasks import Executor
from perflab.workloads import WORKLOADS
from perflab.workloads.base import Workload, parallel_ideal
from perflab.workloads.compute import compute_task
from perflab.workloads.kernel import KERNEL_OPT, calibrate, check_kind

DISTRIBUTIONS = ("uniform", "exponential", "lognormal")


def draw(dist: str, mean: float, cv: float, n: int, seed: int) -> np.ndarray:
    """n task sizes with the given mean and coefficient of variation (never negative)."""
    rng = np.random.default_rng(seed)
    if dist == "uniform":  # U(a, b): cv = (b - a) / (sqrt(12) mean), clipped at 0
        half = min(mean, math.sqrt(3) * cv * mean)
        return rng.uniform(mean - half, mean + half, n)
    if dist == "exponential":  # cv is 1 by nature
        return rng.exponential(mean, n)
    sigma2 = math.log1p(cv * cv)
    return rng.lognormal(math.log(mean) - sigma2 / 2, math.sqrt(sigma2), n)


@WORKLOADS.register
class Imbalanced(Workload):
    name = "imbalanced"
    params = {
        "task_us": Opt(default=1000.0, help="Mean task size (µs of kernel work)."),
        "dist": Opt(
            choices=DISTRIBUTIONS,
            default="lognormal",
            help="The sizes' distribution.",
        ),
        "cv": Opt(default=1.0, help="The sizes' coefficient of variation."),
        "seed": Opt(default=1, help="Random seed of the sizes."),
        "kernel": KERNEL_OPT,
    }

    rate: float = 0.0
    sizes: np.ndarray = np.zeros(0)

    @classmethod
    def resolve_params(cls, params: dict[str, Any]) -> dict[str, Any]:
        merged = super().resolve_params(params)  # checks dist against its choices
        check_kind(str(merged["kernel"]), cls.name)
        return merged

    def prepare(self) -> None:
        self.rate = calibrate(str(self.p["kernel"]))

    def function(self) -> Callable[..., Any]:
        return compute_task

    def task_args(self, i: int) -> tuple[Any, ...]:
        return (round(self.sizes[i] * 1e-6 * self.rate), str(self.p["kernel"]))

    def run_batch(self, engine: Executor, n: int) -> dict[str, Any]:
        p = self.p
        self.sizes = draw(str(p["dist"]), float(p["task_us"]), float(p["cv"]), n, int(p["seed"]))
        return super().run_batch(engine, n)

    def check(self, result: Any) -> bool:
        return isinstance(result, int)

    def ideal_s(self, results: list[Any], slots: int) -> float | None:
        work = np.asarray(results, dtype=float) / self.rate if self.rate else np.zeros(1)
        return parallel_ideal(float(work.sum()), float(work.max(initial=0.0)), slots)

    def details(self, results: list[Any], wall_s: float, slots: int) -> dict[str, Any]:
        us = np.asarray(results, dtype=float) / self.rate * 1e6 if self.rate else np.zeros(1)
        return {
            "kernel_rate_per_s": self.rate,
            "task_us_mean": float(us.mean()),
            "task_us_max": float(us.max(initial=0.0)),
            "task_us_cv": float(us.std() / us.mean()) if us.mean() else 0.0,
        }
