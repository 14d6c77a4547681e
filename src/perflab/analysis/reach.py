"""Precision per hour of a campaign: the interval half-width each effect has reached with the
runs stored, and the runs (and hours, predicted) that would bring it to a target.

The run-to-run variance is measured within sets (replicates of one treatment set: pure
error, on the log of the metric), pooled over the sets. An effect is a factor's main effect on
the log metric, exp(β) being the ratio with/without it, from the runs' least squares over the
sets (weights: runs per set); without factors the "effects" are the sets' own means. With the
design repeated f times every variance falls by f, so the runs to a target follow from
``sizing.pairs_needed`` with the pooled variance and the design's degrees of freedom. Pure.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from perflab.analysis.setstats import keys_of
from perflab.analysis.sizing import duration, half_width, pairs_needed

#: The half-width asked for when a campaign names none (the compare gate's default threshold:
#: an interval this wide still tells a 5 % change from none).
DEFAULT_TARGET = 0.05
#: 95 % intervals, per effect (not corrected for their number: a planning figure, not a claim).
LEVEL = 0.05
#: Effects the per-effect line names (the JSON has every one).
SHOWN = 8


def run_seconds(t: np.ndarray) -> float | None:
    """The wall time a run costs, from its start times: the median gap between consecutive
    starts (robust to a campaign paused and resumed; None with fewer than two runs)."""
    if len(t) < 2:
        return None
    gaps = np.diff(np.sort(np.asarray(t, float)))
    gaps = gaps[gaps > 0]
    return float(np.median(gaps)) if len(gaps) else None


def reach(
    y: np.ndarray,
    x: np.ndarray,
    factors: list[str],
    run_s: float | None,
    target: float = DEFAULT_TARGET,
) -> dict[str, Any]:
    """The campaign's precision per hour (JSON-able): per set its runs and measured spread,
    per effect the relative 95 % half-width reached, the runs in all that reach ±``target``
    and how many more (with ``run_s`` seconds a run, the hours: predicted), and ``lines``."""
    y = np.asarray(y, float)
    x = np.asarray(x, float).reshape(len(y), len(factors))
    out: dict[str, Any] = {"target": target, "level": 1 - LEVEL, "run_s": run_s}
    out.update({"runs": int(len(y)), "sets": [], "effects": [], "why_not": None})
    if not len(y) or np.any(y <= 0) or not np.all(np.isfinite(y)):
        return _without(out, "no runs, or a value ≤ 0 (a ratio needs positive values)")
    keys = keys_of(x)
    _, first, inv = np.unique(keys, return_index=True, return_inverse=True)
    n = np.bincount(inv).astype(float)
    ly = np.log(y)
    mu = np.bincount(inv, weights=ly) / n
    lss = np.bincount(inv, weights=(ly - mu[inv]) ** 2)
    out["sets"] = [_set(x[i], factors, int(n[s]), float(lss[s])) for s, i in enumerate(first)]
    df = int((n - 1).sum())
    if df < 1:
        return _without(out, "no set was run twice: the run-to-run variance is not measured")
    var = float(lss.sum()) / df
    out.update({"pooled_sd_log": math.sqrt(var), "df": df})
    f = np.hstack([np.ones((len(first), 1)), x[first]]) if factors else np.eye(len(first))
    names = factors or [s["set"] for s in out["sets"]]
    cols = range(1, f.shape[1]) if factors else range(f.shape[1])
    c = np.linalg.pinv(f.T @ (n[:, None] * f))
    rank = np.linalg.matrix_rank(f)
    h = math.log1p(target)
    for name, j in zip(names, cols, strict=True):
        aliased = bool(factors) and np.linalg.matrix_rank(np.delete(f, j, axis=1)) == rank
        out["effects"].append(_effect(name, var * float(c[j, j]), aliased, len(y), df, h, run_s))
    out["spent_h"] = len(y) * run_s / 3600 if run_s else None
    out["lines"] = lines(out)
    return out


def _without(out: dict[str, Any], why: str) -> dict[str, Any]:
    out.update({"why_not": why, "lines": [f"precision per hour: not known ({why})"]})
    return out


def _set(row: np.ndarray, factors: list[str], n: int, lss: float) -> dict[str, Any]:
    """One set's runs and measured spread (sd of the log metric ≈ its CV) and the relative
    half-width of its mean."""
    name = ",".join(f for f, v in zip(factors, row, strict=True) if v) or "base"
    sd = math.sqrt(lss / (n - 1)) if n > 1 else None
    hw = math.expm1(half_width(sd**2, n, LEVEL)) if sd is not None else None
    return {"set": name, "runs": n, "sd_log": sd, "half_width": hw}


def _effect(
    name: str, v: float, aliased: bool, runs: int, df: int, h: float, run_s: float | None
) -> dict[str, Any]:
    """An effect's half-width reached (relative), and the runs to ±target: the design
    repeated, so the variance of one run's worth (``v``·runs) stays and df grows with runs."""
    e: dict[str, Any] = {"effect": name, "estimable": not aliased, "half_width": None}
    e.update({"runs_to_target": None, "more_runs": None, "more_hours_predicted": None})
    e["half_width_per_hour"] = None
    if aliased:
        return e
    lost = runs - df  # the sets: the design's runs beyond them are the pure-error df
    hw = half_width(v * runs, runs, LEVEL, lost)
    total = pairs_needed(v * runs, h, LEVEL, k_min=runs, df_lost=lost)
    e.update({"half_width": math.expm1(hw), "runs_to_target": total, "more_runs": total - runs})
    if run_s:
        e["more_hours_predicted"] = (total - runs) * run_s / 3600
        # the half-width an hour of runs gives at this rate (√ of the time: 4× halves it)
        e["half_width_per_hour"] = math.expm1(hw * math.sqrt(runs * run_s / 3600))
    return e


def lines(p: dict[str, Any]) -> list[str]:
    """The wording every output uses: the widest effect reached, and what the target costs."""
    eff = [e for e in p["effects"] if e["half_width"] is not None]
    if not eff:
        return ["precision per hour: no effect is estimable from these runs"]
    worst = max(eff, key=lambda e: e["half_width"])
    spent = f" in {duration(3600 * p['spent_h'])}" if p.get("spent_h") else ""
    out = [
        f"precision: ±{worst['half_width']:.1%} reached on the widest effect ({worst['effect']}, "
        f"95% CI of the ratio){spent}; run-to-run sd {p['pooled_sd_log']:.1%} (log, {p['df']} df)"
    ]
    sds = sorted(s["sd_log"] for s in p["sets"] if s["sd_log"] is not None)
    out.append(
        f"run-to-run sd per set (log, ≈ CV): median {sds[len(sds) // 2]:.1%}, "
        f"{sds[0]:.1%}–{sds[-1]:.1%} over {len(sds)} sets run at least twice"
    )
    more = worst["more_runs"]
    if more == 0:
        out.append(f"every effect is within the target ±{p['target']:.1%}")
    else:
        hours = worst["more_hours_predicted"]
        cost = f", ~{duration(3600 * hours)}" if hours is not None else ""
        out.append(f"±{p['target']:.1%} on every effect: {more} more runs{cost} (predicted)")
    shown = ", ".join(f"{e['effect']} ±{e['half_width']:.1%}" for e in eff[:SHOWN])
    return [
        *out,
        f"per effect: {shown}" + (f" (+{len(eff) - SHOWN} more)" if len(eff) > SHOWN else ""),
    ]
