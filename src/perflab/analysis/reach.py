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

from perflab.analysis.exact import EXACT_RTOL
from perflab.analysis.setstats import keys_of
from perflab.analysis.sizing import duration, half_width, pairs_needed, t_quantile
from perflab.errors import PerflabError

#: The half-width asked for when a campaign names none (the compare gate's default threshold:
#: an interval this wide still tells a 5 % change from none).
DEFAULT_TARGET = 0.05
#: 95 % intervals, per effect (not corrected for their number: a planning figure, not a claim).
LEVEL = 0.05
#: Effects the per-effect line names (the JSON has every one).
SHOWN = 8
#: Why exact data have no precision to reach: every set's runs give the same value, so an
#: interval has zero width by construction, not by measurement (analysis/exact.py).
EXACT_WHY = "exact data: every set's runs identical, no interval to narrow"


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
    pending: np.ndarray | None = None,
) -> dict[str, Any]:
    """The campaign's precision per hour (JSON-able): per set its runs and measured spread,
    per effect the relative 95 % half-width reached, the runs in all that reach ±``target``
    and how many more (with ``run_s`` seconds a run, the hours: predicted), and ``lines``.
    ``pending``: the 0/1 rows of the runs planned but not yet run; each effect then also
    has the half-width predicted at the plan's end (``half_width_at_plan_end``), and the
    runs to the target count them (``more_runs`` are the runs beyond the plan)."""
    y = np.asarray(y, float)
    x = np.asarray(x, float).reshape(len(y), len(factors))
    px = np.zeros((0, len(factors))) if pending is None else np.asarray(pending, float)
    px = px.reshape(len(px), len(factors))
    out: dict[str, Any] = {"target": target, "level": 1 - LEVEL, "run_s": run_s}
    out.update({"runs": int(len(y)), "pending": int(len(px)), "sets": [], "effects": []})
    out["why_not"] = None
    if not len(y):
        return _without(out, "no run has succeeded yet")  # none done, or every one failed
    if np.any(y <= 0) or not np.all(np.isfinite(y)):
        return _without(out, "a value ≤ 0: a ratio needs positive values")
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
    if math.sqrt(var) <= EXACT_RTOL:  # the log scale: a residual is already relative
        out["exact"] = True
        return _without(out, EXACT_WHY, head="precision per hour")
    names = factors or [s["set"] for s in out["sets"]]
    unit = _unit_variances(x[first], n, factors)
    end = _plan_end(x[first], n, px, factors, out["sets"])
    for name, c in zip(names, unit, strict=True):
        v = var * c if isinstance(c, float) else math.nan
        e = _effect(name, v, not isinstance(c, float), len(y), df, math.log1p(target), run_s)
        ce = end["unit"].get(name)
        if len(px) and isinstance(ce, float) and e["estimable"]:  # the plan's end: its df
            _at_end(e, var * ce, end["runs"], end["sets"], math.log1p(target), run_s)
        out["effects"].append({**e, "reference": c == "reference"})
    out["runs_at_plan_end"] = end["runs"]
    out["spent_h"] = len(y) * run_s / 3600 if run_s else None
    out["lines"] = lines(out)
    return out


def _plan_end(
    xs: np.ndarray, n: np.ndarray, px: np.ndarray, factors: list[str], sets: list[dict[str, Any]]
) -> dict[str, Any]:
    """The design at the plan's end: the sets done (rows ``xs``, runs ``n``) with the runs
    pending (rows ``px``) added, each pending run assumed to succeed; each effect's unit
    variance by name, the runs and the sets then. Each set of ``sets`` gets its ``pending``."""
    rows = np.vstack([xs, px])
    weights = np.concatenate([n, np.ones(len(px))])
    _, first, inv = np.unique(keys_of(rows), return_index=True, return_inverse=True)
    n_end = np.bincount(inv, weights=weights)
    for i, s in enumerate(sets):
        s["pending"] = int(round(n_end[inv[i]] - n[i]))
    ends = rows[first]
    names = factors or [
        ",".join(f for f, v in zip(factors, r, strict=True) if v) or "base" for r in ends
    ]
    unit = _unit_variances(ends, n_end, factors)
    return {"unit": dict(zip(names, unit, strict=True)), "runs": int(round(n_end.sum())),
            "sets": len(ends)}  # fmt: skip


def _at_end(e: dict[str, Any], v: float, runs: int, sets: int, h: float, run_s: float | None
            ) -> None:  # fmt: skip
    """An effect's half-width predicted at the plan's end (``v``: its variance then, from
    ``runs`` runs of ``sets`` sets), and the runs to ±target counted from there."""
    e["half_width_at_plan_end"] = math.expm1(half_width(v * runs, runs, LEVEL, sets))
    total = pairs_needed(v * runs, h, LEVEL, k_min=runs, df_lost=sets)
    e.update({"runs_to_target": total, "more_runs": total - runs})
    e["more_hours_predicted"] = (total - runs) * run_s / 3600 if run_s else None


def _unit_variances(xs: np.ndarray, n: np.ndarray, factors: list[str]) -> list[Any]:
    """Each effect's variance in units of one run's (σ² = 1), from the sets' 0/1 rows ``xs``
    and runs ``n``: a factor's main effect beside an intercept (without factors: each set's
    mean). None where it is aliased (its column lies in the others' span); "reference" for
    the first level of a levelled factor (NAME=LEVEL) whose levels split every set: the
    other levels' effects are against it."""
    if not factors:
        return [1.0 / k for k in n]
    refs = _references(xs, factors)
    keep = [j for j in range(len(factors)) if j not in refs]
    f = np.hstack([np.ones((len(xs), 1)), xs[:, keep]])
    c = np.linalg.pinv(f.T @ (n[:, None] * f))
    rank = np.linalg.matrix_rank(f)
    out: list[Any] = ["reference"] * len(factors)
    for i, j in enumerate(keep, start=1):
        aliased = np.linalg.matrix_rank(np.delete(f, i, axis=1)) == rank
        out[j] = None if aliased else float(c[i, i])
    return out


def _references(xs: np.ndarray, factors: list[str]) -> set[int]:
    """The first level's column of each levelled factor whose levels split the sets (one
    level in every set, as a sweep's): with an intercept, one of them must go."""
    groups: dict[str, list[int]] = {}
    for j, f in enumerate(factors):
        if "=" in f:
            groups.setdefault(f.split("=", 1)[0], []).append(j)
    return {
        cols[0]
        for cols in groups.values()
        if len(cols) > 1 and np.all(xs[:, cols].sum(axis=1) == 1)
    }


def design_x(sets: list[list[str]], factors: list[str]) -> np.ndarray:
    """The 0/1 rows of treatment ``sets`` over ``factors``."""
    return np.array([[f in s for f in factors] for s in sets], float).reshape(
        len(sets), len(factors)
    )


def design_scale(x: np.ndarray, factors: list[str]) -> float:
    """How much more variance than a pair's log ratio (2σ²) the least well determined main
    effect of a design has with one run of each of its sets (rows of 0/1 ``x``): a 2³ full
    factorial's effects have 4σ²/8, so 0.25; a sweep's level against its base, 1. A
    ``--precision`` plan's pairs are then the design's replicates."""
    x = np.asarray(x, float)
    known = [c for c in _unit_variances(x, np.ones(len(x)), factors) if isinstance(c, float)]
    if not known:
        raise PerflabError("--precision: no effect of this design is estimable")
    return max(known) / 2


def _without(
    out: dict[str, Any], why: str, head: str = "precision per hour: not known"
) -> dict[str, Any]:
    out.update({"why_not": why, "lines": [f"{head} ({why})"]})
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
    if worst["half_width_per_hour"] is not None:
        out.append(f"at this rate an hour of runs gives ±{worst['half_width_per_hour']:.1%} "
                   "on it (predicted; 4× the time halves it)")  # fmt: skip
    more, planned = worst["more_runs"], p.get("pending", 0)
    if planned:  # what is planned counts: the half-width at the plan's end, runs beyond it
        end = max(eff, key=lambda e: e.get("half_width_at_plan_end") or 0.0)
        out.append(f"runs: {p['runs']} done, {planned} planned not yet run; at the plan's end "
                   f"±{end.get('half_width_at_plan_end') or 0.0:.1%} on the widest effect "
                   f"({end['effect']}, predicted)")  # fmt: skip
    beyond = " beyond the plan" if planned else ""
    if more == 0:
        out.append(f"every effect is within the target ±{p['target']:.1%}" + (
            " at the plan's end (predicted)" if planned else ""))  # fmt: skip
    else:
        hours = worst["more_hours_predicted"]
        cost = f", ~{duration(3600 * hours)}" if hours is not None else ""
        out.append(f"±{p['target']:.1%} on every effect: {more} more runs{beyond}{cost} "
                   "(predicted)")  # fmt: skip
    shown = ", ".join(f"{e['effect']} ±{e['half_width']:.1%}" for e in eff[:SHOWN])
    return [
        *out,
        f"per effect: {shown}" + (f" (+{len(eff) - SHOWN} more)" if len(eff) > SHOWN else ""),
    ]


def more_per_set(p: dict[str, Any]) -> tuple[dict[str, int], float | None]:
    """The runs to add to each set of ``reach``'s result ``p`` so that its widest effect
    reaches ``p["target"]``, and the half-width that effect is then expected to have. The
    design is repeated as ``reach`` predicts it: each set grows in proportion to its runs
    (every variance falls by the factor the runs grow by), and each added run is one more
    degree of freedom of the pure error. Empty (and None) when every effect is within the
    target or none is estimable."""
    eff = [e for e in p.get("effects", []) if e["half_width"] is not None]
    if not eff:
        return {}, None
    worst = max(eff, key=lambda e: e["half_width"])
    # from the plan's end: the runs planned and not yet run count as made
    now, total = p.get("runs_at_plan_end", p["runs"]), worst["runs_to_target"]
    if total <= now:
        return {}, None
    grow = total / now - 1
    more = {s["set"]: math.ceil((s["runs"] + s.get("pending", 0)) * grow - 1e-9)
            for s in p["sets"]}  # fmt: skip
    added = sum(more.values())
    df = p["df"] + now - p["runs"]
    t_now = t_quantile(LEVEL, df)
    t_new = t_quantile(LEVEL, df + added)
    hw_now = worst.get("half_width_at_plan_end") or worst["half_width"]
    hw = math.log1p(hw_now) * math.sqrt(now / (now + added)) * t_new / t_now
    return more, math.expm1(hw)
