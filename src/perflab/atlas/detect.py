"""Steps in a benchmark's series, pure: candidates by penalised segmentation (``compare``'s
PELT on the points' runs), each tested between the segments either side of it.

The unit of the test is a point's mean log value, not a run: points are measured at
different times on a machine whose speed drifts, so runs of one point share more than runs
of two points do, and only the spread of the points' means says how far a segment's level
moves on its own. Each candidate is a t-test of the means of the segment before (at most
``WINDOW`` points) against the segment after, the points' spread about their segments'
levels pooled over the whole series (so a short segment between two steps is still
testable), with at least ``MIN_POINTS`` points each side:
a step is never raised from one point. The level is ``alpha / (k − 1)`` (Bonferroni over the
k − 1 places a step could be), so a history with no step raises one with chance at most
``alpha`` whichever candidates PELT proposed; ``bench/atlas_false_alarms.py`` measures it.
A candidate also needs its ratio beyond ``min_effect`` (asv's rule: significance and size).
Candidates that fail are removed and their neighbours tested again on the merged segments.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from perflab.analysis.stats import bonferroni_level, t_interval, t_sf
from perflab.compare.changepoints import candidates

MIN_POINTS = 2
WINDOW = 8


@dataclass(frozen=True)
class Found:
    """A step between point ``index − 1`` and point ``index`` of the series: the ratio of
    the segment after to the segment before, its interval at ``1 − level``, and the
    segments' bounds (``lo`` … ``hi``, points ``lo..index-1`` before, ``index..hi-1`` after)."""

    index: int
    lo: int
    hi: int
    ratio: float
    low: float
    high: float
    p: float
    level: float
    direction: str

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def statement(k: int, alpha: float) -> str:
    """The false-alarm rate the detection holds to, in words."""
    places = max(1, k - 1)
    return (f"each candidate tested at alpha/{places} = {bonferroni_level(alpha, places):.2g}"
            f" (Bonferroni over the {places} places a step could be): at most {alpha:g} "
            "chance that a series with no step raises one")  # fmt: skip


def _test(means: np.ndarray, lo: int, i: int, hi: int, level: float, min_effect: float,
          higher_is_better: bool, sd: float, df: int) -> Found | None:  # fmt: skip
    left, right = means[max(lo, i - WINDOW) : i], means[i : min(hi, i + WINDOW)]
    if len(left) < MIN_POINTS or len(right) < MIN_POINTS:
        return None
    d = float(right.mean() - left.mean())
    se = sd * math.sqrt(1 / len(left) + 1 / len(right))
    if se > 0 and df > 0:
        p = float(2 * t_sf(abs(d) / se, df))
        low, high = (float(x) for x in t_interval(1 - level, df, loc=d, scale=se))
    else:  # exact data: the difference as measured
        p, low, high = (0.0 if d else 1.0), d, d
    if not (p < level and (low > 0 or high < 0) and abs(d) >= math.log1p(min_effect)):
        return None
    worse = -d if higher_is_better else d
    return Found(i, lo, hi, math.exp(d), math.exp(low), math.exp(high), float(p), level,
                 "slower" if worse > 0 else "faster")  # fmt: skip


def _pooled(means: np.ndarray, bounds: list[int]) -> tuple[float, int]:
    """The sd of a point's mean about its segment's level, pooled over the segments, and its
    degrees of freedom (points less segments)."""
    resid = np.concatenate([means[a:b] - means[a:b].mean() for a, b in itertools.pairwise(bounds)])
    df = len(means) - (len(bounds) - 1)
    return (float(math.sqrt((resid**2).sum() / df)) if df > 0 else 0.0), df


def steps(
    samples: Sequence[Sequence[float]],
    alpha: float = 0.05,
    min_effect: float = 0.05,
    higher_is_better: bool = False,
) -> list[Found]:
    """The steps of a series (each point's runs, oldest first), oldest first."""
    k = len(samples)
    usable = [s for s in samples if len(s) >= 1 and all(v > 0 for v in s)]
    if k < 2 * MIN_POINTS or len(usable) != k:
        return []
    means = np.array([float(np.mean(np.log(np.asarray(s, float)))) for s in samples])
    level = bonferroni_level(alpha, k - 1)
    multi = [s for s in samples if len(s) >= 2]
    cands = sorted(set(candidates(samples))) if multi else list(range(1, k))
    while True:
        bounds = [0, *cands, k]
        sd, df = _pooled(means, bounds)
        tested = [(c, _test(means, bounds[j], c, bounds[j + 2], level, min_effect,
                            higher_is_better, sd, df)) for j, c in enumerate(cands)]  # fmt: skip
        failed = [c for c, f in tested if f is None]
        if not failed:
            return [f for _, f in tested if f is not None]
        # the weakest candidate goes first: the one whose segments differ least
        weakest = min(
            failed, key=lambda c: abs(means[c : c + 2].mean() - means[max(0, c - 2) : c].mean())
        )
        cands.remove(weakest)
