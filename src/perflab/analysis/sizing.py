"""How many runs a t interval of a given half-width needs: the one implementation that
``compare --precision``'s planner (compare/precision.py), the campaign's precision per hour
(``reach``) and every verb's ``--precision`` share. Pure."""

from __future__ import annotations

import functools
import math

from perflab.analysis.stats import norm_ppf, t_ppf

#: Fewest pairs a plan makes (a t interval needs two; three gives it a usable quantile).
MIN_PAIRS = 3


@functools.lru_cache(maxsize=4096)
def t_quantile(level: float, df: int) -> float:
    """The two-sided t quantile at ``level`` (cached: plans ask for the same ones often)."""
    return float(t_ppf(1 - level / 2, df))


def half_width(var_pair: float, k: int, level: float, df_lost: int = 1) -> float:
    """The log-scale half-width of the t interval of k units (pairs, runs) each of variance
    ``var_pair``, with k − ``df_lost`` degrees of freedom (1 for a mean of k pairs; the
    number of sets for an effect whose variance is pooled within sets)."""
    return t_quantile(level, k - df_lost) * math.sqrt(max(var_pair, 0.0) / k)


def pairs_needed(
    var_pair: float, h: float, level: float, k_min: int = MIN_PAIRS, df_lost: int = 1
) -> int:
    """Fewest units k (≥ k_min) whose t interval t(k − df_lost, 1 − level/2)·sqrt(var_pair/k)
    ≤ h, with ``var_pair`` the variance of one unit (one pair's log difference)."""
    k_min = max(k_min, df_lost + 1)
    if var_pair <= 0:
        return k_min
    if h <= 0:
        raise ValueError("the target half-width must be positive")
    z = norm_ppf(1 - level / 2)
    k = max(k_min, math.ceil(var_pair * (z / h) ** 2))
    for _ in range(50):  # the t quantile falls as k grows: a few steps converge
        q = t_quantile(level, k - df_lost)
        need = max(k_min, math.ceil(var_pair * (q / h) ** 2))
        if need == k:
            break
        k = need
    while k > k_min and half_width(var_pair, k - 1, level, df_lost) <= h:
        k -= 1
    while half_width(var_pair, k, level, df_lost) > h:
        k += 1
    return k


def duration(seconds: float) -> str:
    """'42 s', '7 min', '3.2 h', '4.1 days'."""
    if not math.isfinite(seconds):
        return "forever"
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    if seconds < 2 * 86400:
        return f"{seconds / 3600:.1f} h"
    return f"{seconds / 86400:.1f} days"
