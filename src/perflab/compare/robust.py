"""A paired estimate of B/A robust to outliers: Hodges–Lehmann on the pairs' log ratios.

On a busy node a run now and then is slowed by something else (a build, another user's job):
one such run in a pair is an outlier of that pair's log ratio d = log b − log a, and a mean of
the d (the paired t interval) follows it. The Hodges–Lehmann estimate is the median of the
Walsh averages (d_i + d_j)/2, i ≤ j; its interval is the one the Wilcoxon signed-rank test
inverts: between the (c+1)-th smallest and the (c+1)-th largest Walsh average, c the signed-
rank statistic's α/2 quantile (exact distribution up to ``EXACT_N`` pairs, normal beyond).
It estimates the centre of a symmetric distribution of d — what ABBA pairs on a node whose
load slows either side alike give. Its stated coverage is checked on a synthetic truth with
outliers in tests/compare/test_robust.py.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from perflab.analysis.stats import norm_ppf

#: Up to this many pairs the signed-rank distribution is counted exactly.
EXACT_N = 60


@dataclass(frozen=True)
class Robust:
    """The ratio B/A (Hodges–Lehmann, back from the log scale) and its interval at
    ``confidence`` (the achieved one: the signed-rank distribution is discrete)."""

    ratio: float
    low: float
    high: float
    confidence: float
    pairs: int

    def to_dict(self) -> dict[str, Any]:
        return {
            "estimator": "Hodges–Lehmann on paired log ratios (signed-rank interval)",
            "ratio": self.ratio,
            "ci": [self.low, self.high],
            "confidence": self.confidence,
            "pairs": self.pairs,
        }

    def line(self) -> str:
        if not math.isfinite(self.high):
            few = f"too few pairs for a {self.confidence:.0%} interval"
            return (
                f"robust to outliers (Hodges–Lehmann, {self.pairs} pairs): ×{self.ratio:.3f}; {few}"
            )
        return (
            f"robust to outliers (Hodges–Lehmann, {self.pairs} pairs): B/A ×{self.ratio:.3f}, "
            f"{self.confidence:.0%} CI [{self.low:.3f}, {self.high:.3f}]"
        )


def signed_rank_cdf(n: int) -> np.ndarray:
    """P(W ≤ w) for w = 0 … n(n+1)/2, W the signed-rank statistic of n pairs under the null
    (each rank's sign a fair coin): the counts of subsets of {1 … n} by their sum."""
    counts = np.zeros(n * (n + 1) // 2 + 1)
    counts[0] = 1.0
    for r in range(1, n + 1):
        counts[r:] = counts[r:] + counts[:-r].copy()
    return np.cumsum(counts) / 2.0**n


def rank_bound(n: int, level: float) -> tuple[int, float]:
    """(c, achieved confidence): the interval of n pairs drops the c smallest and the c
    largest Walsh averages; c the largest with P(W ≤ c − 1) ≤ level/2."""
    if n <= EXACT_N:
        cdf = signed_rank_cdf(n)
        c = int(np.searchsorted(cdf, level / 2, side="right"))
        tail = float(cdf[c - 1]) if c > 0 else 0.0
        return c, 1.0 - 2.0 * tail
    mean, sd = n * (n + 1) / 4.0, math.sqrt(n * (n + 1) * (2 * n + 1) / 24.0)
    c = max(0, math.floor(mean - norm_ppf(1 - level / 2) * sd))
    return c, 1.0 - level


def hodges_lehmann(a: Sequence[float], b: Sequence[float], level: float = 0.05) -> Robust | None:
    """The robust paired estimate of B/A from runs paired in order (a_i with b_i); None
    under 2 pairs or with a value that is not > 0."""
    n = min(len(a), len(b))
    x, y = np.asarray(a[:n], float), np.asarray(b[:n], float)
    if n < 2 or not (np.all(x > 0) and np.all(y > 0)):
        return None
    d = np.log(y) - np.log(x)
    i, j = np.triu_indices(n)
    walsh = np.sort((d[i] + d[j]) / 2.0)
    c, conf = rank_bound(n, level)
    centre = float(np.median(walsh))
    if c == 0:  # too few pairs for any interval at this level
        return Robust(math.exp(centre), 0.0, math.inf, 1.0 - level, n)
    lo, hi = walsh[c - 1], walsh[len(walsh) - c]
    return Robust(math.exp(centre), math.exp(float(lo)), math.exp(float(hi)), conf, n)
