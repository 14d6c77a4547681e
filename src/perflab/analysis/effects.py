"""Effects of single factors from exact pairs X, X+{t} (mean deltas), with
intervals that hold for few pairs, and state dependence (a factor that helps slow sets and
hurts fast ones, like ``affinity``).  Model-based effects and interactions are in
``claims``."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

from perflab.analysis.data import Dataset
from perflab.analysis.paths import category
from perflab.analysis.stats import adjust, t_ppf, welch_p


def mean_delta_ci(
    delta: np.ndarray, weight: np.ndarray, level: float = 0.95
) -> tuple[float | None, list[float] | None]:
    """Weighted mean of set-pair deltas with a t interval over set pairs (robust sandwich
    variance, pairs - 1 df): the percentile bootstrap undercovers with few pairs."""
    if len(delta) == 0:
        return None, None
    w = weight / weight.sum()
    mean = float(w @ delta)
    p = len(delta)
    if p < 2:
        return mean, None
    se = math.sqrt(float(w**2 @ (delta - mean) ** 2) * p / (p - 1))
    q = float(t_ppf(0.5 + level / 2, p - 1))
    return mean, [mean - q * se, mean + q * se]


def state_dependence(d: pd.DataFrame, factors: list[str]) -> list[dict[str, Any]]:
    """Does a factor's delta change sign between slow and fast starting points?  Per factor,
    set-pair deltas split at the median 'before' time; Welch t test of the two means (Holm over
    factors); flagged when the means have opposite signs and the difference is significant."""
    rows: list[dict[str, Any]] = []
    for f in factors:
        part = d[d["factor"] == f]
        if len(part) < 6:
            continue
        cut = float(part["before"].median())
        slow = part[part["before"] > cut]["delta"].to_numpy()
        fast = part[part["before"] <= cut]["delta"].to_numpy()
        if len(slow) < 3 or len(fast) < 3:
            continue
        rows.append(
            {
                "factor": f,
                "slow_mean_us": float(slow.mean()),
                "fast_mean_us": float(fast.mean()),
                "split_us": cut,
                # scipy.stats.ttest_ind, Welch; both halves exact: untestable (NaN, which
                # adjust() leaves out of the family), as scipy's 0/0 was
                "p": _nan_if_none(welch_p(slow, fast)),
            }
        )
    adj, sig = adjust([r["p"] for r in rows], "holm", 0.05)
    for r, a, s in zip(rows, adj, sig, strict=True):
        r["p_adj"] = a
        r["significant"] = bool(s and np.sign(r["slow_mean_us"]) != np.sign(r["fast_mean_us"]))
    return rows


def _nan_if_none(p: float | None) -> float:
    return math.nan if p is None else p


def factor_entries(
    ds: Dataset, claims: dict[str, dict[str, Any]], d: pd.DataFrame
) -> dict[str, dict[str, Any]]:
    """Per factor: the model's corrected claim plus the exact-pair mean delta (keys in
    docs/contracts.md)."""
    out: dict[str, dict[str, Any]] = {}
    for f, v in claims.items():
        part = d[d["factor"] == f]
        m, ci = mean_delta_ci(part["delta"].to_numpy(), part["weight"].to_numpy().astype(float))
        out[f] = {
            **v,
            "mean_delta_us": m,
            "mean_delta_ci": ci,
            "n_pairs": int(part["weight"].sum()),
            "category": category(ds, f),
        }
    return out
