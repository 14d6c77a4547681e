"""A simulated measurement for testing the search: each point has a declared cost, each run
is that cost times seeded log-normal noise (with a slow drift both sides of a pair share),
and comparisons go through the same sequential paired gate as ``compare``'s."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from perflab.bisect.search import Measure, PointFailed, Step
from perflab.compare.stats import sequential


def simulated_measure(
    costs: Sequence[float],
    sigma: float = 0.02,
    seed: int = 0,
    threshold: float = 0.05,
    n_min: int = 6,
    n_max: int = 20,
    fixed: bool = False,
    broken: Sequence[int] = (),
) -> Measure:
    """``measure(a, b, level)`` on points whose true metric is ``costs[i]``; ``fixed``: every
    comparison makes ``n_max`` runs per side (no early stop); points in ``broken`` fail."""
    rng = np.random.default_rng(seed)
    clock = [0.0]

    def run(i: int) -> float:
        clock[0] += 1
        drift = 0.05 * math.sin(clock[0] / 37.0)  # the machine's slow swing, shared by a pair
        return float(costs[i] * math.exp(drift + rng.normal(0.0, sigma)))

    def measure(a: int, b: int, level: float) -> Step:
        for i in (a, b):
            if i in broken:
                raise PointFailed(i, f"point {i} does not build")
        d, xa, xb = sequential(
            lambda: run(a), lambda: run(b), n_min, n_max, threshold, level,
            early_stop=not fixed,
        )  # fmt: skip
        return Step(a, b, d.ratio, d.ci_low, d.ci_high, d.verdict, len(xa) + len(xb), level)

    return measure
