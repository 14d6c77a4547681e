"""A planned comparison's own runs refine the stored parts (``compare --precision
--update-parts``).

A comparison of k pairs at window n observes the variance of one run's log metric there:
var(d)/2 over its pairs' log ratios d = log B − log A, with k − 1 degrees of freedom (the
mean of d is B's effect, not zero, so one is spent on it). That is one more point of the
pilots' fit v(n) = σ_b² + σ_w²/n (``compare.pilot``): pooled with the stored points (at the
same window their sums of squares add), the parts are refitted by the same weighted least
squares, and S and c by the same line of wall time against n. The intervals come from a
parametric bootstrap of the points — each variance drawn from its scaled χ² (v·χ²_df/df),
each mean wall time from its normal — refitted per draw. Everything here is pure.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from typing import Any

import numpy as np

from perflab.analysis.stats import chi2_ppf
from perflab.compare import command_parts, pilot
from perflab.compare.parts import Measured
from perflab.compare.precision import Parts
from perflab.errors import PerflabError

#: Draws of the parametric bootstrap behind the pooled parts' intervals.
BOOTSTRAP = 400
#: The benchmark a comparison's B must share with A for its runs to pool into A's parts
#: (its treatments, interpreter and packages may differ: that is what a comparison changes).
SAME = ("target", "workload", "command", "params", "engine_options", "metric", "host", "cores")


@dataclass(frozen=True)
class Observation:
    """What runs at one window say: the variance of one run's log metric with its degrees
    of freedom, a run's mean wall time and that time's variance (nan and 0 when unknown),
    and the runs."""

    tasks: int
    var: float
    df: float
    wall_s: float
    wall_var: float
    runs: int


def observations_of(m: Measured) -> list[Observation]:
    """The points stored parts were fitted from. Parts stored before the points were kept
    give the fit's own values at its pilot windows, the pilots' pairs shared out evenly;
    parts from sub-batches (no pilot windows) are bad input: they are not such a fit."""
    if m.observations:
        return [Observation(**o) for o in m.observations]
    if not m.windows:
        raise PerflabError(
            "--update-parts: the stored parts were measured from sub-batches (perflab "
            "precision --splits); only parts fitted from pilot windows (--windows) can pool "
            "a comparison's runs"
        )
    k = max(1, m.runs // (2 * len(m.windows)))
    p = m.parts
    return [Observation(n, p.var_run(n), k, p.run_s(n), 0.0, 2 * k) for n in m.windows]


def from_comparison(a: list[float], b: list[float], walls: list[float], tasks: int) -> Observation:
    """The observation of a comparison's pairs (values of A and B, in pairs) and its runs'
    wall times at window ``tasks``; fewer than two pairs is bad input."""
    k = min(len(a), len(b))
    if k < 2:
        raise PerflabError(f"--update-parts: {k} pair(s) measured, a variance needs 2")
    d = np.log(np.asarray(b[:k], float)) - np.log(np.asarray(a[:k], float))
    w = np.array([x for x in walls if math.isfinite(x) and x > 0], float)
    wall_var = float(np.var(w, ddof=1)) if len(w) > 1 else 0.0
    wall = float(w.mean()) if len(w) else math.nan
    return Observation(int(tasks), float(np.var(d, ddof=1)) / 2, k - 1, wall, wall_var, len(w))


def merge(points: list[Observation], new: Observation) -> list[Observation]:
    """``points`` with ``new`` pooled in: at a window already there, the variances' sums of
    squares and the wall times' runs add; else a new point."""
    out, done = [], False
    for p in points:
        if p.tasks != new.tasks:
            out.append(p)
            continue
        df = p.df + new.df
        var = (p.var * p.df + new.var * new.df) / df
        runs = p.runs + new.runs
        walls = [(x.wall_s, x.wall_var, x.runs) for x in (p, new) if x.runs and x.wall_s > 0]
        wall = sum(w * r for w, _, r in walls) / runs if walls else math.nan
        spread = sum(v * max(r - 1, 0) + r * (w - wall) ** 2 for w, v, r in walls)
        out.append(Observation(p.tasks, var, df, wall, spread / max(runs - 1, 1), runs))
        done = True
    return sorted(out if done else [*out, new], key=lambda o: o.tasks)


def refit(points: list[Observation], seed: int = 0, boot: int = BOOTSTRAP) -> Measured:
    """The parts fitted to ``points`` (``pilot.fit_variance`` and ``pilot.fit_costs``), with
    95 % intervals of a parametric bootstrap and the window they pick (``pilot.pick``)."""
    n = np.array([p.tasks for p in points], float)
    df = np.array([p.df for p in points], float)
    costed = [p for p in points if p.runs > 0 and math.isfinite(p.wall_s)]
    if len(points) < 2 or len({p.tasks for p in costed}) < 2:
        raise PerflabError("--update-parts: the parts need runs at two window sizes at least")
    rng = np.random.default_rng(seed)
    v = np.array([p.var for p in points], float)
    var = np.vstack([v, v * rng.chisquare(df, size=(boot, len(points))) / df])
    var_b, var_w = pilot.fit_variance(n, var, df)
    wall = np.array([p.wall_s for p in costed], float)
    se = np.sqrt([p.wall_var / p.runs for p in costed])
    walls = np.vstack([wall, wall + se * rng.standard_normal((boot, len(costed)))])
    runs = np.array([p.runs for p in costed], float)
    s, c = pilot.fit_costs(np.array([p.tasks for p in costed], float), walls, runs)
    fits = [Parts(*map(float, row)) for row in zip(s, c, var_b, var_w, strict=True)]
    windows = tuple(int(x) for x in n)

    def ci(x: np.ndarray) -> tuple[float, float]:
        return float(np.percentile(x[1:], 2.5)), float(np.percentile(x[1:], 97.5))

    return Measured(
        fits[0], int(sum(p.runs for p in points)), 1, 0.0, ci(s), ci(c), ci(var_b), ci(var_w),
        windows=windows, window=pilot.pick(fits, pilot.trusted(windows)),
        observations=[asdict(p) for p in points],
    )  # fmt: skip


def pool(m: Measured, new: Observation, seed: int = 0) -> Measured:
    """``m`` refitted with ``new`` pooled in (``merge``, ``refit``), under ``m``'s key. A
    command's parts (one point: its whole run) are that point's, pooled."""
    points = merge(observations_of(m), new)
    if m.whole_run:
        (p,) = points
        out = command_parts.refit(p.var, p.df, p.wall_s, p.wall_var, p.runs)
    else:
        out = refit(points, seed)
    out.key, out.signature = m.key, dict(m.signature)
    out.measured_at = datetime.now(UTC).isoformat(timespec="seconds")
    return out


def same_benchmark(a: dict[str, Any], b: dict[str, Any]) -> list[str]:
    """The keys of ``SAME`` in which two calibration signatures differ: why B's runs must
    not pool into A's parts (empty: they may)."""
    return [k for k in SAME if a.get(k) != b.get(k)]


def update_summary(before: Measured, after: Measured, new: Observation) -> dict[str, Any]:
    """What pooling changed, for ``--json`` and the line the verb prints: the comparison's
    variance against the stored parts' at its window (with the comparison's own 95 % χ²
    interval, the parts taken as they were), and the parts before and after."""
    was = before.parts.var_run(new.tasks)
    lo = new.var * new.df / chi2_ppf(0.975, new.df) / was if was > 0 else math.nan
    hi = new.var * new.df / chi2_ppf(0.025, new.df) / was if was > 0 else math.nan
    ratio = new.var / was if was > 0 else math.nan
    at = "of the whole command" if after.whole_run else f"at {new.tasks:,} tasks"
    line = (
        f"parts updated: this comparison's {int(new.df) + 1} pairs {at} "
        f"varied {ratio:.2f}× the stored parts' (95% CI {lo:.2f}–{hi:.2f}); pooled "
        f"σ_b² {before.parts.var_between:.3g} → {after.parts.var_between:.3g} "
        f"({after.between_ci[0]:.3g}–{after.between_ci[1]:.3g})"
    )
    if not after.whole_run:  # a command has no window, so no σ_w² and no pick
        line += (
            f", σ_w² {before.parts.var_within:.3g} → {after.parts.var_within:.3g} "
            f"({after.within_ci[0]:.3g}–{after.within_ci[1]:.3g}), pick "
            f"{before.window or 0:,} → {after.window or 0:,} tasks"
        )
    known = math.isfinite(ratio)
    return {
        "observation": asdict(new),
        "variance_ratio": ratio if known else None,
        "variance_ratio_ci": [lo, hi] if known else None,
        "before": asdict(before.parts),
        "after": after.to_dict(),
        "line": line,
    }
