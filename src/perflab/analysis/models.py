"""Linear models of µs/task on the treatment factors (the seed's ``lm``).

``ols`` is exact least squares by normal equations accumulated over row chunks, so a million
runs with all pairwise interactions fit in bounded memory; the tests check it against
statsmodels.  Model columns that cannot be estimated (an interaction of two factors never
applied together, a duplicate column) are left out and reported.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field

import numpy as np
from scipy import stats
from scipy.linalg import solve_triangular

from perflab.analysis.data import Dataset

CHUNK = 100_000


@dataclass
class Fit:
    names: list[str]
    beta: np.ndarray
    cov: np.ndarray
    r2: float
    sigma: float
    df_resid: int
    log: bool = False
    dropped: list[str] = field(default_factory=list)
    #: 5-fold cross-validated RMSE in µs/task (back-transformed for log models).
    cv_rmse: float | None = None

    def coef(self) -> dict[str, float]:
        return dict(zip(self.names, map(float, self.beta), strict=True))

    def ci(self, c: np.ndarray, level: float = 0.95) -> tuple[float, float, float]:
        """Estimate and confidence interval of the linear combination c'beta."""
        est = float(c @ self.beta)
        se = float(np.sqrt(max(c @ self.cov @ c, 0.0)))
        q = stats.t.ppf(0.5 + level / 2, max(self.df_resid, 1))
        return est, est - q * se, est + q * se


def design_columns(
    factors: list[str],
    interactions: bool,
    extra: dict[str, np.ndarray] | None = None,
) -> tuple[list[str], list]:
    """Column names and generators (callables on a row chunk) of the model matrix."""
    names = ["Intercept", *factors]
    gens: list = [None] + [j for j in range(len(factors))]
    if interactions:
        for a, b in itertools.combinations(range(len(factors)), 2):
            names.append(f"{factors[a]}:{factors[b]}")
            gens.append((a, b))
    for name in extra or {}:
        names.append(name)
        gens.append(name)
    return names, gens


def _chunk(
    x: np.ndarray, gens: list, extra: dict[str, np.ndarray] | None, lo: int, hi: int
) -> np.ndarray:
    xs = x[lo:hi].astype(float)
    cols = []
    for g in gens:
        if g is None:
            cols.append(np.ones(hi - lo))
        elif isinstance(g, int):
            cols.append(xs[:, g])
        elif isinstance(g, tuple):
            cols.append(xs[:, g[0]] * xs[:, g[1]])
        else:
            assert extra is not None
            cols.append(extra[g][lo:hi])
    return np.column_stack(cols)


def ols(
    ds: Dataset,
    interactions: bool,
    log: bool = False,
    extra: dict[str, np.ndarray] | None = None,
    rows: np.ndarray | None = None,
) -> Fit:
    """Least squares of y (or log y) on factors [+ pairwise products] [+ extra columns]."""
    idx = np.arange(len(ds.y)) if rows is None else rows
    x = ds.x[idx]
    y = np.log(ds.y[idx]) if log else ds.y[idx]
    ex = {k: v[idx] for k, v in (extra or {}).items()}
    names, gens = design_columns(ds.factors, interactions, ex)
    p = len(names)
    xtx = np.zeros((p, p))
    xty = np.zeros(p)
    for lo in range(0, len(y), CHUNK):
        m = _chunk(x, gens, ex, lo, min(lo + CHUNK, len(y)))
        xtx += m.T @ m
        xty += m.T @ y[lo : lo + CHUNK]
    keep = _estimable(xtx)
    dropped = [names[i] for i in range(p) if i not in keep]
    xtx, xty = xtx[np.ix_(keep, keep)], xty[keep]
    inv = np.linalg.inv(xtx)
    beta = inv @ xty
    gens = [gens[i] for i in keep]
    names = [names[i] for i in keep]
    rss = 0.0
    for lo in range(0, len(y), CHUNK):
        m = _chunk(x, gens, ex, lo, min(lo + CHUNK, len(y)))
        r = y[lo : lo + CHUNK] - m @ beta
        rss += float(r @ r)
    df_resid = len(y) - len(keep)
    tss = float(((y - y.mean()) ** 2).sum())
    # A saturated fit has no residual degrees of freedom: its uncertainty is unknown (NaN),
    # never zero.
    sigma2 = rss / df_resid if df_resid > 0 else float("nan")
    return Fit(
        names,
        beta,
        inv * sigma2,
        1 - rss / tss if tss > 0 else 0.0,
        float(np.sqrt(sigma2)),
        df_resid,
        log,
        dropped,
    )


def predict(
    fit: Fit,
    x: np.ndarray,
    factors: list[str],
    interactions: bool,
    extra: dict[str, np.ndarray] | None = None,
) -> np.ndarray:
    """The fit's linear predictor for rows ``x`` (log scale for a log fit)."""
    names, gens = design_columns(factors, interactions, extra)
    keep = [names.index(n) for n in fit.names]
    out = np.empty(len(x))
    for lo in range(0, len(x), CHUNK):
        hi = min(lo + CHUNK, len(x))
        out[lo:hi] = _chunk(x, [gens[i] for i in keep], extra, lo, hi) @ fit.beta
    return out


def _estimable(xtx: np.ndarray, tol: float = 1e-9) -> list[int]:
    """Columns in model order, each kept only if it is not (numerically) a combination of
    those kept before it: an incremental Cholesky factorisation of X'X."""
    p = len(xtx)
    chol = np.zeros((p, p))
    keep: list[int] = []
    for i in range(p):
        if xtx[i, i] <= tol:
            continue
        k = len(keep)
        z = solve_triangular(chol[:k, :k], xtx[keep, i], lower=True) if k else np.zeros(0)
        d = xtx[i, i] - z @ z
        if d > tol * xtx[i, i]:
            chol[k, :k] = z
            chol[k, k] = np.sqrt(d)
            keep.append(i)
    return keep


def time_covariates(ds: Dataset) -> dict[str, np.ndarray]:
    """The seed's drift terms: Unix time (hours from the first run) and the time of day."""
    hours = (ds.t - ds.t.min()) / 3600.0
    day = 2 * np.pi * ((ds.t % 86400) / 86400.0)
    return {"hours": hours, "cos_day": np.cos(day), "sin_day": np.sin(day)}


def cv_rmse(ds: Dataset, interactions: bool, log: bool, folds: int = 5, seed: int = 0) -> float:
    """Cross-validated RMSE in the metric's own units (log fits back-transformed with
    Duan's smearing), so fits on different scales can be compared."""
    rng = np.random.default_rng(seed)
    part = rng.integers(0, folds, len(ds.y))
    sq = 0.0
    for k in range(folds):
        train, test = np.flatnonzero(part != k), np.flatnonzero(part == k)
        if len(test) == 0 or len(train) < 2:
            continue
        fit = ols(ds, interactions, log, rows=train)
        pred = predict(fit, ds.x[test], ds.factors, interactions)
        if log:
            fitted = predict(fit, ds.x[train], ds.factors, interactions)
            smear = float(np.mean(np.exp(np.log(ds.y[train]) - fitted)))
            pred = np.exp(pred) * smear
        sq += float(((ds.y[test] - pred) ** 2).sum())
    return float(np.sqrt(sq / len(ds.y)))
