"""Sweeps: per-level estimates of a metric over numeric factors, with intervals.

A numeric factor appears in a dataset as treatments ``name=value`` (one 0/1 column per
level); any factor with two or more numeric levels is a sweep.  For each one, runs are
grouped by its level and by the levels of the other swept factors (the *series*: colour in
the charts); each group gives the mean with a Student-t 95% interval.  For a scaling factor
(workers, blocks) each series also gives speed-up over its smallest level and parallel
efficiency = speed-up × base ÷ level, with percentile-bootstrap intervals, and a fit of the
Universal Scalability Law X(N) = X₁·N ÷ (1 + σ(N−1) + κN(N−1)) (κ = 0 is Amdahl's law).
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np

from perflab.analysis.data import Dataset
from perflab.analysis.stats import Z95, mean_ci, percentile_ci

#: Metrics where larger is better; for the others (times) speed-up is base ÷ level.
HIGHER_BETTER = {"tasks_per_s", "efficiency"}
#: Scaling factors recognised by name when the catalog does not say (a CSV dataset).
SCALING_NAMES = {"workers", "blocks", "threads_per_worker", "max_workers"}
N_BOOT = 2000


def _number(raw: str) -> float | None:
    try:
        value = float(raw)
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def numeric_levels(ds: Dataset) -> dict[str, np.ndarray]:
    """Each numeric factor's level per run (NaN where the run has none of its levels)."""
    groups: dict[str, list[tuple[int, float]]] = {}
    for j, col in enumerate(ds.factors):
        name, sep, raw = col.partition("=")
        value = _number(raw) if sep else None
        if value is not None:
            groups.setdefault(name, []).append((j, float(value)))
    out: dict[str, np.ndarray] = {}
    for name, cols in groups.items():
        if len(cols) < 2:
            continue
        level = np.full(len(ds.y), np.nan)
        for j, value in cols:
            level[ds.x[:, j] == 1] = value
        out[name] = level
    return out


def sweep_section(ds: Dataset, seed: int = 0) -> dict[str, Any]:
    """The analysis JSON's ``sweeps`` and ``scaling_fits`` (empty without numeric factors).
    Scaling factors are the catalog's ``scaling``-tagged ones, or known resource names."""
    tagged = {f.partition("=")[0] for f in ds.meta.tagged("scaling")}
    points, fits = sweeps(ds, tagged, seed)
    return {"sweeps": points, "scaling_fits": fits}


def sweeps(
    ds: Dataset, scaling: set[str] | None = None, seed: int = 0
) -> tuple[dict[str, list[dict[str, Any]]], dict[str, list[dict[str, Any]]]]:
    """``(sweeps, fits)``: ``sweeps{factor: [{level, estimate, ci_low, ci_high, n, series,
    ...}]}`` and, for scaling factors, ``fits{factor: [{series, sigma, kappa, ...}]}``."""
    levels = numeric_levels(ds)
    scaling = SCALING_NAMES | set(scaling or ())
    rng = np.random.default_rng(seed)
    out: dict[str, list[dict[str, Any]]] = {}
    fits: dict[str, list[dict[str, Any]]] = {}
    for name, level in levels.items():
        others = [o for o in levels if o != name]
        rows: list[dict[str, Any]] = []
        for label, given, mask in _series(levels, others, ~np.isnan(level)):
            points = _points(ds.y[mask], level[mask], label, given)
            if len(points) < 2:
                continue
            if name in scaling:
                _speedup(points, ds.y[mask], level[mask], ds.metric in HIGHER_BETTER, rng)
                fit = usl_fit(level[mask], ds.y[mask], ds.metric in HIGHER_BETTER)
                if fit is not None:
                    fits.setdefault(name, []).append({"series": label, **fit})
            rows += points
        if rows:
            out[name] = rows
    return out, fits


def _series(
    levels: dict[str, np.ndarray], others: list[str], valid: np.ndarray
) -> list[tuple[str, dict[str, float], np.ndarray]]:
    """Runs grouped by the other swept factors' levels (one series per combination)."""
    if not others:
        return [("", {}, valid)]
    keys = np.column_stack([levels[o] for o in others])
    out = []
    for combo in sorted({tuple(k) for k in keys[valid]}):
        if any(math.isnan(v) for v in combo):
            continue
        mask = valid & np.all(keys == np.array(combo), axis=1)
        given = {o: _plain(v) for o, v in zip(others, combo, strict=True)}
        label = ", ".join(f"{o}={v:g}" for o, v in given.items())
        out.append((label, given, mask))
    return out


def _plain(v: float) -> float:
    return int(v) if float(v).is_integer() else float(v)


def _points(
    y: np.ndarray, level: np.ndarray, label: str, given: dict[str, float]
) -> list[dict[str, Any]]:
    points = []
    for v in np.unique(level):
        # every perflab metric is a time, rate, size or ratio: never negative
        est, lo, hi = mean_ci(y[level == v], floor=0.0)
        points.append(
            {
                "level": _plain(v),
                "estimate": est,
                "ci_low": lo,
                "ci_high": hi,
                "n": int((level == v).sum()),
                "series": label,
                "given": given,
            }
        )
    return points


def _speedup(
    points: list[dict[str, Any]],
    y: np.ndarray,
    level: np.ndarray,
    higher_better: bool,
    rng: np.random.Generator,
) -> None:
    """Speed-up over the smallest level and parallel efficiency, with bootstrap CIs."""
    values = [y[level == p["level"]] for p in points]
    base_level = points[0]["level"]

    def ratios(means: np.ndarray) -> np.ndarray:
        return means / means[..., :1] if higher_better else means[..., :1] / means

    means = np.array([v.mean() for v in values])
    boot = np.column_stack([rng.choice(v, size=(N_BOOT, len(v))).mean(axis=1) for v in values])
    with np.errstate(divide="ignore", invalid="ignore"):
        s, sb = ratios(means), ratios(boot)
    for i, p in enumerate(points):
        scale = base_level / p["level"] if p["level"] else math.nan
        lo, hi = percentile_ci(sb[:, i]) if len(values[i]) > 1 else (None, None)
        p["speedup"] = float(s[i])
        p["speedup_ci"] = [_f(lo), _f(hi)]
        p["parallel_efficiency"] = float(s[i] * scale)
        p["parallel_efficiency_ci"] = [_f(lo, scale), _f(hi, scale)]


def _f(x: Any, scale: float = 1.0) -> float | None:
    return None if x is None or not math.isfinite(float(x) * scale) else float(x) * scale


def _usl(n: np.ndarray, x1: float, sigma: float, kappa: float) -> np.ndarray:
    return x1 * n / (1 + sigma * (n - 1) + kappa * n * (n - 1))


def usl_fit(level: np.ndarray, y: np.ndarray, higher_better: bool) -> dict[str, Any] | None:
    """Least-squares USL fit of throughput (1 ÷ time for time metrics) over the runs;
    None with fewer than 3 levels or when the fit fails."""
    if len(np.unique(level)) < 3 or np.any(level <= 0) or np.any(y <= 0):
        return None
    from scipy.optimize import curve_fit  # 0.5 s of imports, only for sweeps

    x = y if higher_better else 1.0 / y
    scale = float(np.mean(x[level == level.min()])) / float(level.min())
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            popt, pcov = curve_fit(
                _usl,
                level,
                x / scale,
                p0=[1.0, 0.05, 0.001],
                bounds=([0, 0, 0], [np.inf, 1, 1]),
                maxfev=5000,
            )
    except (RuntimeError, ValueError):
        return None
    se = np.sqrt(np.clip(np.diag(pcov), 0, None))
    resid = x / scale - _usl(level, *popt)
    ss_tot = float(np.sum((x / scale - np.mean(x / scale)) ** 2))
    sigma, kappa = float(popt[1]), float(popt[2])

    def ci(v: float, s: float) -> list[float]:  # within the parameter's bounds [0, 1]
        return [max(0.0, v - Z95 * s), min(1.0, v + Z95 * s)]

    return {
        "model": "usl",
        "x1": float(popt[0] * scale),
        "sigma": sigma,
        "sigma_ci": ci(sigma, float(se[1])),
        "kappa": kappa,
        "kappa_ci": ci(kappa, float(se[2])),
        "r2": 1 - float(np.sum(resid**2)) / ss_tot if ss_tot > 0 else None,
        # a parameter on its bound (0 or 1) makes the covariance intervals unreliable
        "at_bound": bool(np.any(np.isclose(popt[1:], 0, atol=1e-6) | np.isclose(popt[1:], 1))),
        "peak_level": math.sqrt((1 - sigma) / kappa) if kappa > 1e-9 and sigma < 1 else None,
    }
