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

from perflab.analysis.sizing import pairs_needed
from perflab.compare.parts import Measured
from perflab.compare.precision import Parts, Plan, expect, log_half


def ends(found: Measured, scale: float = 1.0) -> tuple[Parts, Parts] | None:
    """The parts at the low and the high ends of their 95 % intervals, the variances times
    ``scale`` (as ``plan_or_refuse`` scales them); None when no interval is known (every
    end missing or equal to its point)."""
    p = found.parts
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
        walls = [
            float(expect(pl, p, looks, precision_from).expected_wall_s or 0.0) for p in bounds
        ]
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
