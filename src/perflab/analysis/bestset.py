"""The recommended treatment set: search, corrected pruning, prediction interval, speed-up.

A set is only recommended where the model can predict it (its row is estimable) and the
catalog allows it (``conflicts``, ``requires``).  Pruning removes, one at a time, the member
whose saving at the set is least supported by a one-sided t test, Holm-adjusted over the
members, until every remaining member's saving is significant; a member whose removal gives an
unpredictable or forbidden set is kept and marked ``untested``.

Which member goes first depends on the evidence alone, never on names or column order: the
largest adjusted p, then the costlier catalog category (the nicer factor is kept), then the
largest raw p, then the smaller estimated saving. Each member and each dropped factor carries
its evidence: the predicted time without it ÷ with it, with a t interval.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from perflab.analysis.claims import FACTOR_ALPHA, Predictor, allowed, rows_of, search
from perflab.analysis.stats import adjust, t_cdf, t_ppf


def _drop_test(pred: Predictor, key: int, j: int) -> dict[str, float]:
    """Factor j at set ``key``: p of "it saves time" (one-sided t; NaN if untestable), and the
    predicted time without it ÷ with it, with a 95% t interval (on the log scale for a log
    fit, by the delta method for an additive one)."""
    fit = pred.fit
    keys = np.array([key, key ^ (1 << j)], dtype=np.int64)
    f = pred.rows(keys)
    c = f[0] - f[1]
    nan = float("nan")
    out = {"p": nan, "drop_ratio": nan, "drop_ci_low": nan, "drop_ci_high": nan}
    if not fit.estimable(c) or fit.df <= 0:
        return out
    est = float(c @ fit.beta)
    se = float(np.sqrt(max(c @ fit.cov @ c, 0.0)))
    if fit.exact:  # the saving is what was measured: no test, no interval
        with_, without = pred.us(f @ fit.beta).tolist()
        return {**out, "exact_saving": -est, "drop_ratio": without / with_ if with_ else nan}
    if not se > 0:
        return out
    out["p"] = float(t_cdf(est / se, fit.df))
    q = float(t_ppf(0.975, fit.df))
    if fit.log:  # log T(without) - log T(with) = -est
        out.update(
            drop_ratio=math.exp(-est),
            drop_ci_low=math.exp(-est - q * se),
            drop_ci_high=math.exp(-est + q * se),
        )
    else:
        with_, without = (f @ fit.beta).tolist()
        if with_ > 0 and without > 0:
            r = without / with_
            se_r = se / with_  # delta method, the set's own time taken as known
            out.update(drop_ratio=r, drop_ci_low=r - q * se_r, drop_ci_high=r + q * se_r)
    return out


def _drop_order(t: dict[str, Any]) -> tuple[float, ...]:
    """Sort key: the first member is the one to drop first (see the module docstring). Values
    are rounded: a fit of the same data in another column order agrees to ~1e-15."""
    p_adj = t["p_adj"] if math.isfinite(t["p_adj"]) else -1.0
    ratio = t["drop_ratio"] if math.isfinite(t["drop_ratio"]) else math.inf
    return (-round(p_adj, 9), -t["rank"], -round(t["p"], 9), round(ratio, 9))


def prune(
    pred: Predictor,
    key: int,
    bad: np.ndarray,
    requires: list[tuple[int, int]],
    ranks: list[int] | None = None,
) -> tuple[int, list[dict[str, Any]], list[dict[str, Any]]]:
    """Corrected backward pruning; returns the set, each member's final test, and each dropped
    factor's test at the moment it was dropped. ``ranks``: each factor's category position
    (larger: costlier to apply)."""
    k = pred.k
    ranks = ranks or [0] * k
    dropped: list[dict[str, Any]] = []
    while True:
        members = [j for j in range(k) if key >> j & 1]
        if not members:
            return key, [], dropped
        tests = [{"factor": j, "rank": ranks[j], **_drop_test(pred, key, j)} for j in members]
        adj, sig = adjust([t["p"] for t in tests], "holm", FACTOR_ALPHA)
        for t, aj, sj in zip(tests, adj, sig, strict=True):
            t.update(p_adj=aj, significant=sj)
        drop = None
        exact = pred.fit.exact
        for t in sorted(tests, key=_drop_order):
            # exact data: a member goes only if it saves nothing (no test to pass or fail)
            if (
                (t.get("exact_saving", 1.0) > 0)
                if exact
                else (t["significant"] or not math.isfinite(t["p_adj"]))
            ):
                continue
            cand = key ^ (1 << int(t["factor"]))
            _, est = pred.linear(np.array([cand], dtype=np.int64))
            if est[0] and allowed(rows_of(np.array([cand]), k), bad, requires)[0]:
                drop = cand
                dropped.append(t)
                break
        if drop is None:
            for t in tests:
                t["untested"] = "exact_saving" not in t and not math.isfinite(t["p_adj"])
            return key, tests, dropped
        key = drop


def speedup(pred: Predictor, key: int, level: float = 0.95) -> dict[str, Any]:
    """``_speedup``; for the untreated set itself 1 by definition, with no interval (a
    prediction divided by itself printed "95% CI 1.00..1.00x": nothing was measured)."""
    out = _speedup(pred, key, level)
    if key == 0:
        out.update(ratio=1.0, ci=None, untreated=True)
    return out


def _speedup(pred: Predictor, key: int, level: float = 0.95) -> dict[str, Any]:
    """T(base) / T(set) with a t interval (log fit: exact on the log scale; additive fit: delta
    method on the log ratio), and a prediction interval for one run of the set."""
    fit = pred.fit
    f = pred.rows(np.array([0, key], dtype=np.int64))
    lin = f @ fit.beta
    t_us = pred.us(lin)
    out: dict[str, Any] = {"ratio": float(t_us[0] / t_us[1]), "ci": None, "pi_us": None}
    if fit.exact:  # measured exactly: an interval of width 0 would be one invented
        out["exact"] = True
    if fit.exact or fit.df <= 0 or not (fit.estimable(f[0]) and fit.estimable(f[1])):
        return out
    q = float(t_ppf(0.5 + level / 2, fit.df))
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
    ranks: list[int] | None = None,
) -> dict[str, Any]:
    """Search, prune, and describe the best set (keys of the analysis JSON)."""
    raw, method = search(pred, bad, requires)
    key, tests, dropped = prune(pred, raw, bad, requires, ranks)
    lin, _ = pred.linear(np.array([key], dtype=np.int64))
    sp = speedup(pred, key)

    def named(t: dict[str, Any]) -> dict[str, Any]:
        return {**{k: v for k, v in t.items() if k != "rank"}, "factor": names[t["factor"]]}

    return {
        "key": key,
        "raw_key": raw,
        "best_us": float(pred.us(lin)[0]),
        "method": method,
        "speedup": sp,
        "members": [named(t) for t in tests],
        "dropped": [
            {
                **named(t),
                "why": "exact data: saves nothing"
                if "exact_saving" in t
                else "saving not significant after Holm",
            }
            for t in dropped
        ],  # fmt: skip
        "unsupported": [names[t["factor"]] for t in tests if t.get("untested")],
    }
