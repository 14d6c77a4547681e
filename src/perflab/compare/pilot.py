"""The variance parts from pilot runs at two (or more) window sizes, and the window they pick.

The sub-batch ANOVA of ``parts.estimate`` sees the within-window noise only at the time scale
of one sub-batch (about half a second for HTEX noop). Noise that swings over tens of seconds —
the load of a shared machine — is then counted as "between runs", although a longer window
averages it out, and the planner picks windows far too short (bench/precision_grid.py measured
its pick 5.7× worse in half-width per wall-hour than the grid's best).

Here both terms are measured where they act: A/A pairs of fresh runs at window sizes n_i give
the variance of one run's log metric, v_i = mean(d²)/2 over the pairs' log differences d
(the mean of d is zero for A/A, so k pairs give k degrees of freedom), and

    v_i = σ_b² + σ_w² / n_i

is fitted to them by non-negative weighted least squares (exact with two windows). The fixed
cost S and the cost per task c are the intercept and slope of the runs' wall time against n,
so everything a run costs outside its window (spawn, start-up, teardown) is in S. The window
that minimises the half-width per wall-hour, sqrt((σ_b² + σ_w²/n)(S + c·n)), is
n* = sqrt(σ_w² S / (σ_b² c)), clamped to the bounds. Everything here is pure.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from perflab.analysis.stats import Z95, chi2_ppf
from perflab.compare.precision import WINDOW_BOUNDS, Parts
from perflab.errors import PerflabError

#: Fewest A/A pairs per pilot window (one pair gives one degree of freedom).
MIN_PAIRS = 2
#: Resamples of the pairs behind the intervals of the fitted parts.
BOOTSTRAP = 400


@dataclass(frozen=True)
class PilotRun:
    """One pilot run: its window (tasks), its metric's value and its wall time in seconds."""

    tasks: int
    value: float
    wall_s: float


@dataclass(frozen=True)
class Fitted:
    """Parts fitted from pilots at several windows, with 95 % percentile-bootstrap intervals,
    and the per-window variances they were fitted to."""

    parts: Parts
    windows: tuple[int, ...]
    pairs: tuple[int, ...]
    var_run: tuple[float, ...]
    fixed_ci: tuple[float, float]
    task_ci: tuple[float, float]
    between_ci: tuple[float, float]
    within_ci: tuple[float, float]
    n_star_ci: tuple[float, float]
    #: The window picked: least mean regret over the bootstrap's parts (see ``pick``).
    window: int
    #: Per window: a run's mean wall time and the variance of a run's wall time (twice the
    #: variance of a pair's mean), for pooling later runs in (``compare.refine``).
    walls: tuple[float, ...] = ()
    wall_vars: tuple[float, ...] = ()


def per_hour(parts: Parts, n: float) -> float:
    """The log-scale 95 % half-width of the mean log ratio that one wall-hour of A/A pairs of
    window ``n`` gives (normal quantile: the shape of the curve, not a t interval)."""
    pairs = 3600.0 / (2.0 * parts.run_s(n))
    return Z95 * math.sqrt(2.0 * parts.var_run(n) / pairs)


def best_window(parts: Parts, bounds: tuple[int, int] = WINDOW_BOUNDS) -> int:
    """The window (tasks) within ``bounds`` that minimises the half-width per wall-hour: n*
    clamped, compared with its integer neighbours (the curve is unimodal in n). Without any
    noise every window is as good: the shortest (cheapest) wins."""
    lo, hi = bounds
    if parts.var_between <= 0 and parts.var_within <= 0:
        return lo
    n = parts.n_star()
    if not math.isfinite(n):
        return hi
    around = {min(hi, max(lo, v)) for v in (math.floor(n), math.ceil(n))}
    return min(sorted(around), key=lambda w: per_hour(parts, w))


def pairs_by_window(runs: Sequence[PilotRun]) -> dict[int, tuple[np.ndarray, np.ndarray]]:
    """Window → (log differences of its A/A pairs, the pairs' mean wall times): consecutive
    runs of the same window are a pair, in the order given; an unpaired last run is left out."""
    by: dict[int, list[PilotRun]] = {}
    for r in runs:
        if not (r.value > 0 and math.isfinite(r.value)):
            raise PerflabError(f"pilot run of {r.tasks} tasks: metric value {r.value} is not > 0")
        by.setdefault(int(r.tasks), []).append(r)
    out = {}
    for n, rs in sorted(by.items()):
        k = len(rs) // 2
        if k == 0:
            continue
        logs = np.log([r.value for r in rs[: 2 * k]]).reshape(k, 2)
        walls = np.array([r.wall_s for r in rs[: 2 * k]], float).reshape(k, 2)
        out[n] = (logs[:, 1] - logs[:, 0], walls.mean(axis=1))
    return out


def pair_variances(runs: Sequence[PilotRun]) -> dict[int, tuple[float, int]]:
    """Window → (variance of one run's log metric, pairs): mean(d²)/2 over its A/A pairs."""
    return {n: (float(np.mean(d**2)) / 2.0, len(d)) for n, (d, _) in pairs_by_window(runs).items()}


def fit_variance(windows: np.ndarray, var: np.ndarray, df: np.ndarray) -> tuple[np.ndarray, ...]:
    """(σ_b², σ_w²) ≥ 0 of var ≈ σ_b² + σ_w²/n for each row of ``var`` (fits × windows):
    weighted least squares with a sample variance's weights, df / (2 v²), at the fitted
    values (three reweightings). A 2-parameter non-negative fit is the unconstrained one when
    both are ≥ 0, else the better of the two one-parameter fits."""
    x = 1.0 / np.asarray(windows, float)
    var = np.atleast_2d(np.asarray(var, float))
    scale = np.max(var, axis=1, keepdims=True)
    floor = np.where(scale > 0, scale, 1.0)
    fitted = np.maximum(var, floor * 1e-3)
    a = b = np.zeros(len(var))
    for _ in range(3):
        w = df / (2.0 * np.maximum(fitted, floor * 1e-6) ** 2)
        a, b = _nn_line(x, var, w)
        fitted = a[:, None] + b[:, None] * x
    zero = scale[:, 0] <= 0
    return np.where(zero, 0.0, a), np.where(zero, 0.0, b)


def _nn_line(x: np.ndarray, y: np.ndarray, w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Row-wise weighted least squares y ≈ a + b·x with a, b ≥ 0."""
    sw, sx, sy = w.sum(1), (w * x).sum(1), (w * y).sum(1)
    sxx, sxy = (w * x * x).sum(1), (w * x * y).sum(1)
    det = sw * sxx - sx**2
    safe = np.where(det > 0, det, 1.0)
    a_u, b_u = (sxx * sy - sx * sxy) / safe, (sw * sxy - sx * sy) / safe
    a_only, b_only = np.maximum(sy / sw, 0.0), np.maximum(sxy / sxx, 0.0)

    def sse(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        return (w * (y - a[:, None] - b[:, None] * x) ** 2).sum(1)

    use_a = sse(a_only, 0 * a_only) <= sse(0 * b_only, b_only)
    ok = (det > 0) & (a_u >= 0) & (b_u >= 0)
    a = np.where(ok, a_u, np.where(use_a, a_only, 0.0))
    b = np.where(ok, b_u, np.where(use_a, 0.0, b_only))
    return a, b


def fit_costs(
    tasks: np.ndarray, walls: np.ndarray, weight: np.ndarray | None = None
) -> tuple[np.ndarray, ...]:
    """(S, c) ≥ 0 for each row of ``walls`` (fits × windows): the weighted line of wall time
    against the window; a negative intercept puts all of the cost on the tasks, a negative
    slope all of it on the start-up."""
    n = np.asarray(tasks, float)
    if np.ptp(n) == 0:
        raise PerflabError("the pilots' cost needs runs of at least two window sizes")
    y = np.atleast_2d(np.asarray(walls, float))
    w = np.ones_like(n) if weight is None else np.asarray(weight, float)
    sw, mn = w.sum(), (w * n).sum() / w.sum()
    my = (y * w).sum(1) / sw
    c = ((w * (n - mn)) * (y - my[:, None])).sum(1) / (w * (n - mn) ** 2).sum()
    s = my - c * mn
    per_task = (w * y / n).sum(1) / sw
    return (np.where(s < 0, 0.0, np.where(c < 0, my, s)),
            np.where(s < 0, per_task, np.where(c < 0, 0.0, c)))  # fmt: skip


def estimate(
    runs: Sequence[PilotRun],
    seed: int = 0,
    boot: int = BOOTSTRAP,
    bounds: tuple[int, int] = WINDOW_BOUNDS,
) -> Fitted:
    """The parts of pilot runs at two or more windows (A/A pairs: consecutive runs of a
    window), with 95 % intervals from ``boot`` resamples of the pairs within each window, and
    the window they pick (``pick``). Fewer than two windows with ``MIN_PAIRS`` pairs each is
    bad input."""
    got = pairs_by_window(runs)
    usable = {n: v for n, v in got.items() if len(v[0]) >= MIN_PAIRS}
    if len(usable) < 2:
        have = ", ".join(f"{len(d)} pair(s) of {n}" for n, (d, _) in got.items()) or "no pairs"
        raise PerflabError(
            f"the pilots need at least {MIN_PAIRS} A/A pairs at each of two window sizes "
            f"(got {have})"
        )
    rng = np.random.default_rng(seed)
    # column 0 is the data itself, the others its resamples (pairs drawn within each window)
    draws = [np.column_stack([np.arange(len(d)), rng.integers(len(d), size=(len(d), boot))])
             for d, _ in usable.values()]  # fmt: skip
    v = np.stack(
        [np.mean(d[i] ** 2, axis=0) / 2 for (d, _), i in zip(usable.values(), draws, strict=True)],
        1,
    )
    walls = np.stack(
        [np.mean(wl[i], axis=0) for (_, wl), i in zip(usable.values(), draws, strict=True)], 1
    )
    n = np.array(list(usable), float)
    k = np.array([len(d) for d, _ in usable.values()], float)
    var_b, var_w = fit_variance(n, v, k)
    s, c = fit_costs(n, walls, k)
    fits = [Parts(*map(float, row)) for row in zip(s, c, var_b, var_w, strict=True)]

    def ci(values: np.ndarray) -> tuple[float, float]:
        if len(values) == 0:
            return math.nan, math.nan
        return float(np.percentile(values, 2.5)), float(np.percentile(values, 97.5))

    return Fitted(
        fits[0],
        tuple(usable),
        tuple(int(x) for x in k),
        tuple(float(x) for x in v[0]),
        ci(s[1:]),
        ci(c[1:]),
        ci(var_b[1:]),
        ci(var_w[1:]),
        ci(np.array([float(best_window(f, bounds)) for f in fits[1:]])),
        pick(fits, trusted(tuple(usable), bounds)),
        tuple(float(np.mean(wl)) for _, wl in usable.values()),
        tuple(2 * float(np.var(wl, ddof=1)) if len(wl) > 1 else 0.0 for _, wl in usable.values()),
    )


def trusted(windows: tuple[int, ...], bounds: tuple[int, int] = WINDOW_BOUNDS) -> tuple[int, int]:
    """The windows a pick may go to: from the shortest pilot window (never below it) to the
    longest widened 4×, within ``bounds``. The model is a straight line in 1/n; below its
    points a window has noise the pilots never saw: on parsl-htex, CPU per task at 125 tasks
    varied ~8× more than a 500/8,000 pilot's fit said (CPU ticks and the window's edges weigh
    more in a short window): planned at ±9.2 %, it reached ±20 % (docs/precision.md)."""
    lo, hi = bounds
    low = max(lo, min(windows))
    return low, max(low, min(hi, max(windows) * 4))


def pick(fits: Sequence[Parts], bounds: tuple[int, int], points: int = 48) -> int:
    """The window of ``points`` log-spaced ones within ``bounds`` whose half-width per
    wall-hour, relative to the best each fit allows, is least on average over ``fits`` (the
    point estimate and its bootstrap resamples). Plugging in the point estimate alone
    (``best_window``) jumps to a bound whenever a pilot's noise floors σ_b² or σ_w² at zero;
    averaging the regret keeps the pick where every likely fit loses little."""
    lo, hi = bounds
    grid = np.unique(np.geomspace(lo, hi, points).round().astype(int))
    arr = np.array([(p.var_between, p.var_within, p.fixed_s, p.task_s) for p in fits], float)
    a, b, s, c = (arr[:, i : i + 1] for i in range(4))
    m = np.sqrt((a + b / grid) * (s + c * grid))  # ∝ per_hour: the ratios are the same
    best = m.min(axis=1, keepdims=True)
    regret = np.where(best > 0, m / np.where(best > 0, best, 1.0), 1.0)
    return int(grid[int(np.argmin(regret.mean(axis=0)))])


def chi2_ci(var: float, df: float) -> tuple[float, float]:
    """The 95 % interval of a variance estimated with ``df`` degrees of freedom."""
    return (
        var * df / chi2_ppf(0.975, df),
        var * df / chi2_ppf(0.025, df),
    )
