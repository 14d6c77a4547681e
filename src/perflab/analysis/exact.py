"""Exact (deterministic) data: a fit whose residuals are zero up to rounding.

Syscall counts, bytes written, a simulator's makespan: the same set gives the same number every
time, and often a model fits them exactly. Then a standard error is 0 (or rounding noise
~1e-16), a t statistic is 0/0 or rounding noise over rounding noise, and a p-value from it
is meaningless: p = 0 for an effect of -7.9e-16 was a claim made of nothing. On an exact fit
an estimate is what the data say, to rounding, with no test: effects within rounding of 0 are
0, predictions are the measured means, and every claim says "exact data: no test".
"""

from __future__ import annotations

import numpy as np

#: A fit is exact when its root-mean-square residual (set means and replicates alike) is at
#: most this share of the data's scale; estimates within it of 0 are 0. Doubles carry ~1e-16
#: and the Gram solve in ±1 coding loses a few digits, so 1e-9 is rounding, not a measurement
#: (a real effect 1e-9 of the metric's scale is beyond any timer or counter we read).
EXACT_RTOL = 1e-9
#: A fit's ``mode`` (how its uncertainty was obtained) when it is exact.
EXACT_MODE = "exact data (residuals zero to rounding)"
#: The claim an exact fit's estimate carries instead of a test.
EXACT_CLAIM = "exact data: no test"


def data_scale(ybar: np.ndarray, log: bool) -> float:
    """The scale residuals are judged against: the largest set mean (1 on the log scale,
    where a residual is already a relative error)."""
    if log:
        return 1.0
    return float(np.max(np.abs(ybar))) if len(ybar) else 0.0


def is_exact(rss: float, ss_pure: float, runs: float, scale: float, df: int) -> bool:
    """Whether a fit with these residual sums of squares (set means, weighted; and within
    sets) is exact. A fit with no residual degrees of freedom is never called exact: zero
    residuals are then forced, not observed."""
    if df <= 0 or runs <= 0:
        return False
    rms = float(np.sqrt(max(rss, 0.0) + max(ss_pure, 0.0)) / np.sqrt(runs))
    return rms <= EXACT_RTOL * max(scale, np.finfo(float).tiny)


def snap(values: np.ndarray, scale: float) -> np.ndarray:
    """``values`` with those within rounding of 0 set to exactly 0 (an exact fit's estimates:
    rounding must not pick a sign, a best set or a "faster")."""
    out = np.array(values, dtype=float)
    out[np.abs(out) <= EXACT_RTOL * max(scale, np.finfo(float).tiny)] = 0.0
    return out
