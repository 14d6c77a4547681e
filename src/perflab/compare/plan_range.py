"""The plan's range: the runs and the wall time a plan would need at the ends of the stored
parts' 95 % intervals, next to its point figures. A prediction from the parts' own sampling
error (a 4-pair pilot's σ_b² can be half the truth: docs/precision.md), not a guarantee.

The window stays the plan's (it is chosen once, before any run); what moves with the parts
is how many pairs that window needs and what they cost. The low end takes both variances
(σ_b², σ_w²) and both costs (S, c) at their interval's lower bound, the high end at the
upper: the two fits' sampling errors are not independent, so the joint ends are a
conservative (wider than 95 %) range of the variance at the window. Every verb that prints a
plan from stored parts gets its range here (``ranged``), so the figures agree everywhere.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable

import numpy as np

from perflab.analysis.sizing import pairs_needed
from perflab.compare.parts import Measured
from perflab.compare.pilot import fit_variance
from perflab.compare.precision import Parts, Plan, expect, log_half


def ends(
    found: Measured, scale: float = 1.0, tasks: int | None = None
) -> tuple[Parts, Parts] | None:
    """The parts at the low and the high ends of their 95 % intervals, the variances times
    ``scale`` (as ``plan_or_refuse`` scales them); None when no interval is known (every
    end missing or equal to its point). With the points the parts were fitted from and a
    window ``tasks``, the variance at that window gets its own interval (``window_var_ci``)
    and the ends hold it as σ_b² (σ_w² 0): they are then for that window only."""
    p = found.parts
    if tasks is not None and found.observations and not found.whole_run:
        lo_v, hi_v = window_var_ci(found, tasks)
        low = Parts(_end(found.fixed_ci, p.fixed_s, min), _end(found.task_ci, p.task_s, min),
                    lo_v, 0.0)  # fmt: skip
        high = Parts(_end(found.fixed_ci, p.fixed_s, max), _end(found.task_ci, p.task_s, max),
                     hi_v, 0.0)  # fmt: skip
        return _scaled(low, scale), _scaled(high, scale)
    cis = (found.fixed_ci, found.task_ci, found.between_ci, found.within_ci)
    points = (p.fixed_s, p.task_s, p.var_between, p.var_within)
    lo, hi = [], []
    for point, ci in zip(points, cis, strict=True):
        a, b = (ci[0], ci[1]) if len(ci) == 2 else (math.nan, math.nan)
        lo.append(min(point, a) if math.isfinite(a) else point)
        hi.append(max(point, b) if math.isfinite(b) else point)
    if lo == list(points) and hi == list(points):
        return None
    low, high = Parts(*lo), Parts(*hi)
    return _scaled(low, scale), _scaled(high, scale)


def _end(ci: tuple[float, ...], point: float, side: Callable[[float, float], float]) -> float:
    a = ci[0 if side is min else 1] if len(ci) == 2 else math.nan
    return side(point, a) if math.isfinite(a) else point


def window_var_ci(
    found: Measured, tasks: int, boot: int = 2000, seed: int = 0
) -> tuple[float, float]:
    """The 95 % interval of one run's log-metric variance at window ``tasks``, from the
    points the parts were fitted from: each point's variance drawn from its scaled χ²
    (v·χ²_df/df), the fit redone (``pilot.fit_variance``), and the interval taken pivotal on
    the log scale (2 log v̂ − the draws' quantiles), which for one window is the exact χ²
    interval. The bootstrap's percentiles of a pilot's few pairs cap the upper end at the
    largest pair seen: from 4-pair pilots the joint interval ends covered the runs needed in
    81–86 % of draws, not 95 % (bench/precision_range.py)."""
    pts = found.observations
    n = np.array([o["tasks"] for o in pts], float)
    df = np.array([o["df"] for o in pts], float)
    v = np.array([o["var"] for o in pts], float)
    rng = np.random.default_rng(seed)
    draws = np.vstack([v, v * rng.chisquare(df, size=(boot, len(pts))) / df])
    a, b = fit_variance(n, draws, df)
    at = a + b / tasks
    point = found.parts.var_run(tasks)
    if not (point > 0 and np.all(at[1:] > 0)):
        return float(np.percentile(at[1:], 2.5)), float(np.percentile(at[1:], 97.5))
    logs = np.log(at[1:])
    return (float(np.exp(2 * math.log(point) - np.percentile(logs, 97.5))),
            float(np.exp(2 * math.log(point) - np.percentile(logs, 2.5))))  # fmt: skip


def _scaled(p: Parts, scale: float) -> Parts:
    return dataclasses.replace(
        p, var_between=max(0.0, p.var_between) * scale, var_within=max(0.0, p.var_within) * scale
    )


def ranged(
    pl: Plan,
    bounds: tuple[Parts, Parts] | None,
    looks: list[int] | None = None,
    precision_from: int = 2,
) -> Plan:
    """``pl`` with ``pairs_range`` and ``wall_range_s`` from the parts at ``bounds`` (see
    ``ends``): the pairs each end needs at the plan's window and confidence, and the wall
    time each end spends — the sequence's (``expect`` over ``looks``) when given, else the
    planned look's. ``pl`` as it is without bounds."""
    if bounds is None:
        return pl
    h, level = log_half(pl.target), 1 - pl.confidence
    pairs = [pairs_needed(2 * p.var_run(pl.tasks), h, level) for p in bounds]
    if looks:
        walls = [float(expect(pl, p, looks, precision_from).expected_wall_s or 0.0) for p in bounds]
    else:
        walls = [2 * k * p.run_s(pl.tasks) for k, p in zip(pairs, bounds, strict=True)]
    walls = [w * pl.units / 2 for w in walls]
    return dataclasses.replace(
        pl,
        pairs_range=(min(pairs[0], pl.pairs), max(pairs[1], pl.pairs)),
        wall_range_s=(min(walls[0], pl.wall), max(walls[1], pl.wall)),
    )


def needed(truth: Parts, pl: Plan) -> int:
    """The pairs ``truth`` needs at ``pl``'s window and confidence: what the range predicts
    (the tests' and benches' yardstick)."""
    return pairs_needed(2 * truth.var_run(pl.tasks), log_half(pl.target), 1 - pl.confidence)
