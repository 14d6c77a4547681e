"""The recommended treatment set: search, corrected pruning, prediction interval, speed-up.

A set is only recommended where the model can predict it (its row is estimable) and the
catalog allows it (``conflicts``, ``requires``).  Pruning removes, one at a time, the member
whose saving at the set is least supported by a one-sided t test, Holm-adjusted over the
members, until every remaining member's saving is significant; a member whose removal gives an
unpredictable or forbidden set is kept and marked ``untested``.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from perflab.analysis import dist
from perflab.analysis.claims import FACTOR_ALPHA, Predictor, adjust, allowed, rows_of, search


def _one_sided(pred: Predictor, key: int, j: int) -> float:
    """p of 'adding factor j to key - j saves time' (NaN if untestable)."""
    fit = pred.fit
    f = pred.rows(np.array([key, key ^ (1 << j)], dtype=np.int64))
    c = f[0] - f[1]
    if not fit.estimable(c) or fit.df <= 0:
        return float("nan")
    est = float(c @ fit.beta)
    se = float(np.sqrt(max(c @ fit.cov @ c, 0.0)))
    if not se > 0:
        return float("nan")
    return float(dist.t_cdf(est / se, fit.df))


def prune(
    pred: Predictor, key: int, bad: np.ndarray, requires: list[tuple[int, int]]
) -> tuple[int, list[dict[str, Any]]]:
    """Corrected backward pruning; returns the set and each member's final test."""
    k = pred.k
    while True:
        members = [j for j in range(k) if key >> j & 1]
        if not members:
            return key, []
        p = [_one_sided(pred, key, j) for j in members]
        adj, sig = adjust(p, "holm", FACTOR_ALPHA)
        tests = [
            {"factor": j, "p": pj, "p_adj": aj, "significant": sj}
            for j, pj, aj, sj in zip(members, p, adj, sig, strict=True)
        ]
        drop = None
        for t in sorted(tests, key=lambda t: -(t["p_adj"] if math.isfinite(t["p_adj"]) else -1)):
            if t["significant"] or not math.isfinite(t["p_adj"]):
                continue
            cand = key ^ (1 << int(t["factor"]))
            _, est = pred.linear(np.array([cand], dtype=np.int64))
            if est[0] and allowed(rows_of(np.array([cand]), k), bad, requires)[0]:
                drop = cand
                break
        if drop is None:
            for t in tests:
                t["untested"] = not math.isfinite(t["p_adj"])
            return key, tests
        key = drop


def speedup(pred: Predictor, key: int, level: float = 0.95) -> dict[str, Any]:
    """T(base) / T(set) with a t interval (log fit: exact on the log scale; additive fit: delta
    method on the log ratio), and a prediction interval for one run of the set."""
    fit = pred.fit
    f = pred.rows(np.array([0, key], dtype=np.int64))
    lin = f @ fit.beta
    t_us = pred.us(lin)
    out: dict[str, Any] = {"ratio": float(t_us[0] / t_us[1]), "ci": None, "pi_us": None}
    if fit.df <= 0 or not (fit.estimable(f[0]) and fit.estimable(f[1])):
        return out
    q = float(dist.t_ppf(0.5 + level / 2, fit.df))
    v = f @ fit.cov @ f.T
    if fit.log:
        d = lin[0] - lin[1]
        se = math.sqrt(max(v[0, 0] + v[1, 1] - 2 * v[0, 1], 0.0))
        out["ci"] = [math.exp(d - q * se), math.exp(d + q * se)]
        spread = math.sqrt(v[1, 1] + fit.sigma2_run)
        out["pi_us"] = [
            float(pred.us(lin[1:] - q * spread)[0]),
            float(pred.us(lin[1:] + q * spread)[0]),
        ]
    else:
        t0, t1 = lin
        if t0 > 0 and t1 > 0:
            var = v[0, 0] / t0**2 + v[1, 1] / t1**2 - 2 * v[0, 1] / (t0 * t1)
            se = math.sqrt(max(var, 0.0))
            r = math.log(t0 / t1)
            out["ci"] = [math.exp(r - q * se), math.exp(r + q * se)]
        spread = math.sqrt(v[1, 1] + fit.sigma2_run)
        out["pi_us"] = [float(t1 - q * spread), float(t1 + q * spread)]
    return out


def recommend(
    pred: Predictor,
    names: list[str],
    bad: np.ndarray,
    requires: list[tuple[int, int]],
    seed: int = 0,
) -> dict[str, Any]:
    """Search, prune, and describe the best set (keys of the analysis JSON)."""
    raw, method = search(pred, bad, requires, seed)
    key, tests = prune(pred, raw, bad, requires)
    lin, _ = pred.linear(np.array([key], dtype=np.int64))
    sp = speedup(pred, key)
    return {
        "key": key,
        "raw_key": raw,
        "best_us": float(pred.us(lin)[0]),
        "method": method,
        "speedup": sp,
        "members": [{**t, "factor": names[t["factor"]]} for t in tests],
    }
