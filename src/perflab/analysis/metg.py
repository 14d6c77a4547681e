"""METG: the minimum effective task granularity (Task Bench, Slaughter et al., SC'20).

Granularity of a run = wall × cores ÷ tasks (the time one task occupies one core, overhead
included).  Efficiency = ideal ÷ wall, where the ideal is the work spread over the cores.
METG(t) is the granularity at which efficiency falls through t (t = 50%).

A METG is reported as a *crossing* only when it is bracketed: a measured level ``above``
whose efficiency interval lies wholly over t, and a smaller measured level ``below`` whose
interval lies wholly under it.  Between them the efficiency curve and both of its 95%
interval curves cross t, so the METG (log-linear interpolation on the mean curve) has a
two-sided interval (the same rule on the interval curves).  Until then, ``next_level``
says which task size to measure next: ×10 steps outwards until both sides are found, then
bisection in log task size until the bracket is at most ``max_ratio`` wide.  A bound is
only reported when a limit stops the search (the kernel's smallest task, the largest task
size allowed, runs that fail), with that reason.

Two bases for efficiency: ``peak`` (default: the kernel's calibrated single-core rate, Task
Bench's peak-FLOP/s basis) and ``largest`` (relative to the sweep's largest task size, for
when the peak is not trusted).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from perflab.analysis.sweeps import mean_ci
from perflab.errors import PerflabError

BASES = ("peak", "largest")
#: Stop bisecting once the bracket's task sizes are within this ratio.
MAX_RATIO = 2.0
#: Search limits (µs): the kernel cannot make a task much smaller than one hash of 4 KiB,
#: and a task of a second makes a point cost minutes.
FLOOR_US = 2.0
CEILING_US = 100_000.0
STEP = 10.0
#: Most runs of one level (more replicates while its interval straddles the threshold).
MAX_RUNS = 9


def granularity_us(wall_s: float, slots: int, tasks: int) -> float:
    return wall_s * slots / tasks * 1e6


def efficiency_curve(runs: pd.DataFrame, basis: str = "peak") -> pd.DataFrame:
    """Per task-size level: granularity (µs) and efficiency with 95% CIs, largest first.

    ``runs`` needs columns ``task_us, tasks, wall_s, slots, efficiency`` (ok runs only).
    """
    if basis not in BASES:
        raise PerflabError(f"METG basis {basis!r} is not one of {', '.join(BASES)}")
    if runs.empty:
        raise PerflabError("METG: no ok runs to analyse")
    df = runs.copy()
    df["granularity_us"] = df["wall_s"] * df["slots"] / df["tasks"] * 1e6
    eff = df["efficiency"].to_numpy(dtype=float)
    if basis == "largest":
        top = df["task_us"] == df["task_us"].max()
        eff = eff / float(np.mean(eff[top.to_numpy()]))
    df["eff"] = eff
    rows = []
    for level, g in df.groupby("task_us", sort=True):
        e, lo, hi = mean_ci(g["eff"].to_numpy(), floor=0.0)
        gr, glo, ghi = mean_ci(g["granularity_us"].to_numpy(), floor=0.0)
        rows.append(
            {
                "task_us": float(level),  # type: ignore[arg-type]
                "granularity_us": gr,
                "granularity_ci": [glo, ghi],
                "efficiency": e,
                "ci_low": lo,
                "ci_high": hi,
                "n": len(g),
                "tasks": int(g["tasks"].max()),
            }
        )
    return pd.DataFrame(rows).sort_values("task_us", ascending=False, ignore_index=True)


def metg_of(gran: np.ndarray, eff: np.ndarray, threshold: float) -> tuple[float | None, str]:
    """Task Bench's rule on one curve (largest granularity first). Returns (METG, status):
    ``ok``; ``below`` (never reaches the threshold: None); ``upper`` (every level reaches
    it: METG ≤ the smallest granularity measured).  Interpolation is linear in log
    granularity (the levels are geometric)."""
    above = [i for i in range(len(eff)) if eff[i] >= threshold]
    if not above:
        return None, "below"
    i = min(above, key=lambda k: gran[k])
    nxt = i + 1
    if nxt >= len(eff):
        return float(gran[i]), "upper"
    if 0 < gran[nxt] < gran[i] and eff[nxt] < threshold:
        t = (eff[i] - threshold) / (eff[i] - eff[nxt])
        return float(math.exp(math.log(gran[i]) + t * math.log(gran[nxt] / gran[i]))), "ok"
    return float(gran[i]), "ok"


@dataclass
class Bracket:
    """Where the measured levels stand against the threshold (indices into the curve,
    largest task first): ``above`` is the smallest level clearly over it, ``below`` the
    largest level under ``above`` clearly under it (None: not found yet)."""

    above: int | None
    below: int | None
    sides: list[str]

    @property
    def crossed(self) -> bool:
        return self.above is not None and self.below is not None


def classify(curve: pd.DataFrame, threshold: float) -> Bracket:
    """Each level ``above``/``below``/``straddles`` (its interval contains the threshold;
    a level of one run has no interval and straddles)."""
    sides = []
    for lo, hi in zip(curve["ci_low"], curve["ci_high"], strict=True):
        if lo is None or hi is None or not np.isfinite(lo) or not np.isfinite(hi):
            sides.append("straddles")
        else:
            sides.append("above" if lo > threshold else "below" if hi < threshold else "straddles")
    above = max((i for i, s in enumerate(sides) if s == "above"), default=None)
    below = None
    if above is not None:
        below = next((i for i in range(above + 1, len(sides)) if sides[i] == "below"), None)
    return Bracket(above, below, sides)


def next_level(
    curve: pd.DataFrame,
    threshold: float = 0.5,
    max_ratio: float = MAX_RATIO,
    floor_us: float = FLOOR_US,
    ceiling_us: float = CEILING_US,
    failed_us: tuple[float, ...] = (),
    max_runs: int = MAX_RUNS,
) -> tuple[float | None, str]:
    """The next task size to measure (µs; a size already measured: more replicates of it),
    or None and why the search stops.

    A level whose interval straddles the threshold but whose mean says which side it is on
    gets more replicates (up to ``max_runs``) before the search moves past it: on a shared
    machine one disturbed run widens a 3-run interval across 0.5.  ``failed_us``: sizes
    whose runs failed (the engine's limit: never gone below)."""
    b = classify(curve, threshold)
    sizes = curve["task_us"].to_numpy(dtype=float)
    eff = curve["efficiency"].to_numpy(dtype=float)
    n = curve["n"].to_numpy(dtype=int)
    if b.crossed:
        assert b.above is not None and b.below is not None
        span = sizes[b.above : b.below + 1]  # largest first
        ratio, i = max((span[i] / span[i + 1], i) for i in range(len(span) - 1))
        if ratio <= max_ratio:
            return None, f"bracketed within ×{sizes[b.above] / sizes[b.below]:.2g}"
        return float(math.sqrt(span[i] * span[i + 1])), "bisect"
    if b.above is None:  # nothing clearly reaches the threshold
        best = int(np.argmax(eff))
        if eff[best] >= threshold and n[best] < max_runs:
            return float(sizes[best]), "more runs (mean over, interval not)"
        nxt = float(sizes.max()) * STEP
        if nxt > ceiling_us:
            return None, f"no size up to {sizes.max():g} µs reached {threshold:g} (ceiling)"
        return nxt, "up"
    under = [i for i in range(b.above + 1, len(sizes)) if eff[i] < threshold and n[i] < max_runs]
    if under:
        return float(sizes[under[0]]), "more runs (mean under, interval not)"
    smallest = float(sizes.min())
    if any(f <= smallest for f in failed_us):
        return None, f"runs failed below {smallest:g} µs (the engine's limit)"
    if smallest / STEP < floor_us:
        if smallest > floor_us:
            return floor_us, "down to the kernel's floor"
        return None, f"still at or over {threshold:g} at {smallest:g} µs (the kernel's floor)"
    return smallest / STEP, "down"


def _crossing(gran: np.ndarray, eff: np.ndarray, t: float, a: int, b: int) -> float:
    """Where ``eff`` falls through ``t`` between levels a (over) and b (under), in log
    granularity: the last level over t before the first under it, scanning from a."""
    first_under = next(i for i in range(a, b + 1) if eff[i] < t)
    last_over = max(i for i in range(a, first_under) if eff[i] >= t)
    g1, g2, e1, e2 = gran[last_over], gran[first_under], eff[last_over], eff[first_under]
    frac = (e1 - t) / (e1 - e2)
    return float(math.exp(math.log(g1) + frac * math.log(g2 / g1)))


def metg(
    runs: pd.DataFrame,
    threshold: float = 0.5,
    basis: str = "peak",
    limit: str | None = None,
) -> dict[str, Any]:
    """METG(threshold) with its interval and the efficiency curve it came from.

    ``status``: ``crossing`` (bracketed; two-sided interval), ``upper`` (a bound: METG ≤
    ``metg_us``), ``lower`` (METG > ``metg_us``) or ``open`` (not bracketed and no limit
    reached: measure more levels).  ``limit`` is the search's reason to stop, if any."""
    if not 0 < threshold < 1:
        raise PerflabError(f"METG threshold must be in (0, 1) (got {threshold})")
    curve = efficiency_curve(runs, basis)
    gran = curve["granularity_us"].to_numpy(dtype=float)
    eff = curve["efficiency"].to_numpy(dtype=float)
    lo_curve = curve["ci_low"].fillna(curve["efficiency"]).to_numpy(dtype=float)
    hi_curve = curve["ci_high"].fillna(curve["efficiency"]).to_numpy(dtype=float)
    b = classify(curve, threshold)
    out: dict[str, Any] = {
        "threshold": threshold,
        "basis": basis,
        "max_efficiency": float(eff.max()),
        "levels": len(curve),
        "limit": limit,
        # a level with one ok run has no interval: None, not the frame's NaN (which JSON
        # printed as NaN, and which read as a number)
        "curve": [
            {k: None if isinstance(v, float) and math.isnan(v) else v for k, v in r.items()}
            for r in curve.to_dict(orient="records")
        ],
    }
    if b.crossed:
        assert b.above is not None and b.below is not None
        a, z = b.above, b.below
        point = _crossing(gran, eff, threshold, a, z)
        # the interval spans where the mean curve and both bound curves cross; granularity
        # need not fall with task size under noise, so it is sorted, not assumed ordered
        ends = [point, *(_crossing(gran, c, threshold, a, z) for c in (hi_curve, lo_curve))]
        out.update(
            metg_us=point,
            ci_low=min(ends),
            ci_high=max(ends),
            status="crossing",
            bracket_us=[float(curve["task_us"][a]), float(curve["task_us"][z])],
        )
        return out
    # Not bracketed: METG ≤ the smallest granularity clearly over t, or > every level's.
    if b.above is None:
        status, value = "lower", float(gran.max())
    else:
        status, value = "upper", float(gran[b.above])
    out.update(metg_us=value, ci_low=None, ci_high=None, status=status if limit else "open")
    out["bound"] = {"upper": "METG ≤", "lower": "METG >"}[status]
    return out
