"""The tuner's statistics: screening fits on log time, measured speed-ups.

Times are compared on the log scale: performance effects are multiplicative, and the
log makes the noise of slow and fast sets comparable.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import statsmodels.api as sm

from perflab.analysis.exact import EXACT_RTOL
from perflab.analysis.stats import mean_ci


@dataclass
class Effect:
    """A factor's screened effect on log time: negative = faster."""

    name: str
    estimate: float
    ci_low: float
    ci_high: float
    p: float


def screen_effects(x: np.ndarray, y: np.ndarray, names: list[str]) -> list[Effect]:
    """Main effects of 0/1 columns ``x`` on log ``y`` (OLS, HC3 errors: unequal spreads and
    the odd outlier do not make the intervals lie). Columns that never vary are skipped."""
    keep = [j for j in range(x.shape[1]) if 0 < x[:, j].sum() < len(x)]
    m = sm.add_constant(x[:, keep].astype(float), has_constant="add")
    df_resid = len(y) - m.shape[1]
    if df_resid < 1:
        return []
    fit = sm.OLS(np.log(y), m).fit(cov_type="HC3")
    ci = np.asarray(fit.conf_int())
    return [
        Effect(
            names[j],
            float(fit.params[i + 1]),
            ci[i + 1, 0],
            ci[i + 1, 1],
            float(fit.pvalues[i + 1]),
        )
        for i, j in enumerate(keep)
    ]


@dataclass
class SpeedUp:
    """Measured speed-up of a set over the base: base time ÷ set time, from paired runs."""

    ratio: float
    ci_low: float
    ci_high: float
    pairs: int
    base_us: float
    best_us: float
    exact: bool = False  # every pair's ratio the same (a deterministic score): no width


def paired_speedup(base: np.ndarray, best: np.ndarray, level: float = 0.95) -> SpeedUp:
    """Ratio of geometric means from runs measured in adjacent (base, best) pairs, with a
    t interval on the pairs' log ratios (pairing cancels slow drift of the machine)."""
    n = min(len(base), len(best))
    logs = np.log(base[:n]) - np.log(best[:n])
    mean, lo, hi = mean_ci(logs, level)
    return SpeedUp(
        ratio=math.exp(mean),
        ci_low=math.exp(lo) if lo is not None else 0.0,
        ci_high=math.exp(hi) if hi is not None else math.inf,
        pairs=n,
        base_us=float(np.exp(np.log(base[:n]).mean())),
        best_us=float(np.exp(np.log(best[:n]).mean())),
        exact=bool(n >= 2 and np.ptp(logs) <= EXACT_RTOL),
    )
