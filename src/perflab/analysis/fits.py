"""Set-level linear models with honest uncertainty (see docs/statistics.md).

* Runs of one treatment set share the model's lack of fit, so inference is at the level of
  sets: weighted least squares of set means (weights = runs) with HC3 standard errors and
  ``sets - rank`` degrees of freedom; with too few spare sets, the classical set-level
  variance; with none (a set-saturated model), pure error from the replicates; with neither,
  nothing (NaN: "not assessable").
* Run-level covariates (drift, replicate blocks) are estimated within sets (set fixed effects),
  which lack of fit cannot bias, with cluster-robust (by set) standard errors; every effect is
  fitted on the adjusted set means and its variance includes the adjustment's.  Without
  replicates the covariate enters the set-level regression instead.
* Estimability by a column-pivoted QR of the (scaled) Gram matrix: the rank, and the null space,
  whose projector is independent of column order.  Estimates are the minimum-norm solution, so
  every estimable quantity (and every prediction) is invariant to permuting the factors;
  alias chains are the columns the null space ties together (in ±1 coding, the textbook
  ``ab = cd``).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field

import numpy as np
import scipy.linalg

from perflab.analysis.exact import EXACT_MODE, data_scale, is_exact, snap
from perflab.analysis.gram import (  # noqa: F401  (re-exported: one_blas_thread, solve_gram)
    RANK_TOL,
    Factor,
    Solve,
    _syrk,
    factor,
    one_blas_thread,
    solve_gram,
)
from perflab.analysis.setstats import SetStats
from perflab.analysis.stats import f_sf, t_ppf, t_sf

#: Below this many spare sets (sets - rank), HC3 is unreliable: use the pooled set variance.
HC3_MIN_DF = 10
INTERCEPT = "(intercept)"


def column_names(factors: list[str], pairs: bool) -> list[str]:
    names = [INTERCEPT, *factors]
    if pairs:
        names += [f"{a}:{b}" for a, b in itertools.combinations(factors, 2)]
    return names


def model_matrix(x: np.ndarray, pairs: bool) -> np.ndarray:
    """Rows of 0/1 sets in ±1 coding: intercept, z_j, and z_a z_b for every pair if ``pairs``."""
    z = 2.0 * np.asarray(x, float) - 1.0
    m, k = z.shape
    out = np.empty((m, 1 + k + (k * (k - 1) // 2 if pairs else 0)))
    out[:, 0] = 1.0
    out[:, 1 : k + 1] = z
    if pairs:
        # one broadcast product per factor, written in place (a gather of pair columns and a
        # stack cost 10x more at 30,000 sets)
        c = k + 1
        for a in range(k - 1):
            np.multiply(z[:, a : a + 1], z[:, a + 1 :], out=out[:, c : c + k - a - 1])
            c += k - a - 1
    return out


@dataclass
class Drift:
    """Run-level covariates estimated within sets."""

    names: list[str]
    gamma: np.ndarray
    cov: np.ndarray
    df: int
    between: list[str] = field(default_factory=list)  # terms moved into the set-level model


def drift_within(s: SetStats, log: bool) -> Drift:
    """Within-set (fixed-effect) estimate of the covariates, cluster-robust by set; terms the
    within-set variation cannot support go to the set-level model instead."""
    q = len(s.cov_names)
    if q == 0:
        return Drift([], np.zeros(0), np.zeros((0, 0)), 0)
    a = s.sgg.sum(axis=0)
    sgy = s.sgly if log else s.sgy
    keep = _supported(a, s.df_pure)
    between = [s.cov_names[i] for i in range(q) if i not in keep]
    if not keep:
        return Drift([], np.zeros(0), np.zeros((0, 0)), 0, between)
    kk = np.ix_(keep, keep)
    ainv = np.linalg.inv(a[kk])
    gamma = ainv @ sgy.sum(axis=0)[keep]
    score = sgy[:, keep] - np.einsum("sij,j->si", s.sgg[:, keep][:, :, keep], gamma)
    g = int((s.n >= 2).sum())
    meat = score.T @ score * (g / max(g - 1, 1))
    cov = ainv @ meat @ ainv
    return Drift([s.cov_names[i] for i in keep], gamma, cov, max(g - 1, 0), between)


def _supported(a: np.ndarray, df_pure: int) -> list[int]:
    """Covariates with independent within-set variation (pivoted QR of their cross products),
    at most df_pure - 2 of them."""
    d = np.sqrt(np.diag(a))
    if df_pure < 3 or not np.any(d > 0):
        return []
    d[d == 0] = 1.0
    _, r, piv = scipy.linalg.qr(a / d[:, None] / d[None, :], pivoting=True)
    rank = int((np.abs(np.diag(r)) > 1e-8 * max(abs(r[0, 0]), 1e-300)).sum())
    return sorted(int(i) for i in piv[: min(rank, df_pure - 2)])


@dataclass
class Fit:
    """A set-level fit: estimates, covariance on the estimable space, and how it was obtained."""

    names: list[str]
    beta: np.ndarray
    cov: np.ndarray
    df: int  # degrees of freedom of the t reference (0: no uncertainty available)
    mode: str  # "HC3 on set means" | "set-level variance" | "pure error" | "not assessable"
    rank: int
    sets: int
    null: np.ndarray
    sigma2_run: float  # variance of one future run (for prediction intervals)
    rss_sets: float  # weighted residual sum of squares of set means
    log: bool = False
    pairs: bool = False
    drift: Drift | None = None
    smear: float = 1.0  # Duan's smearing factor for back-transforming a log fit
    r2: float = float("nan")  # run-level R² (log scale for a log fit), after the adjustment
    exact: bool = False  # residuals zero to rounding (analysis/exact.py): no test, no width

    @property
    def p(self) -> int:
        return len(self.names)

    def estimable(self, c: np.ndarray) -> bool:
        if self.null.shape[1] == 0:
            return True
        scale = max(float(np.linalg.norm(c)), 1e-300)
        return bool(np.linalg.norm(self.null.T @ c) <= 1e-7 * scale)

    def contrast(self, c: np.ndarray, level: float = 0.95) -> dict[str, float]:
        """c'beta with its standard error, t interval and two-sided p (NaN where the contrast is
        not estimable or the fit has no degrees of freedom)."""
        return self.contrasts([c], level)[0]

    def contrasts(self, cs: list[np.ndarray], level: float = 0.95) -> list[dict[str, float]]:
        """``contrast`` of each c, with one t quantile and one vectorised t tail for all (465
        scalar scipy calls cost ~0.3 s)."""
        nan = float("nan")
        out: list[dict[str, float]] = []
        tested: list[int] = []  # rows still waiting for their interval and p
        for c in cs:
            if not self.estimable(c):
                out.append({"est": nan, "se": nan, "lo": nan, "hi": nan, "p": nan})
                continue
            est = float(c @ self.beta)
            se = float(np.sqrt(max(c @ self.cov @ c, 0.0))) if self.df > 0 else nan
            out.append({"est": est, "se": se if np.isfinite(se) else nan})
            if np.isfinite(se):
                tested.append(len(out) - 1)
            else:
                out[-1].update(lo=nan, hi=nan, p=nan)
        if tested:
            q = float(t_ppf(0.5 + level / 2, self.df))
            est_ = np.array([out[i]["est"] for i in tested])
            se_ = np.array([out[i]["se"] for i in tested])
            pos = se_ > 0
            tails = 2 * t_sf(np.abs(est_[pos]) / se_[pos], self.df)
            # a zero standard error (exact data) leaves nothing to test: no p, never p = 0
            ps = np.full(len(est_), nan)
            ps[pos] = tails
            for i, p in zip(tested, ps, strict=True):
                r = out[i]
                r.update(lo=r["est"] - q * r["se"], hi=r["est"] + q * r["se"], p=float(p))
        return out

    def aliases(self, j: int, tol: float = 1e-6) -> list[str]:
        """The other columns that column j cannot be told apart from (empty if estimable)."""
        if self.null.shape[1] == 0:
            return []
        proj = self.null @ self.null[j]
        if proj[j] <= tol:
            return []
        return [self.names[i] for i in np.flatnonzero(np.abs(proj) > tol) if i != j]


class Columns:
    """A model's columns over the distinct sets, with the weighted Gram matrix accumulated per
    cross-validation fold (so the fit and every fold share one pass: cost ~ sets x p^2)."""

    def __init__(
        self,
        s: SetStats,
        factors: list[str],
        pairs: bool,
        between: list[str],
        folds: int = 5,
        seed: int = 0,
    ) -> None:
        idx = {n: i for i, n in enumerate(s.cov_names)}
        f = model_matrix(s.x, pairs)
        self.names = column_names(factors, pairs)
        if between:
            f = np.hstack([f, s.g_mean[:, [idx[n] for n in between]]])
            self.names = self.names + between
        self.f, self.pairs, self.w = f, pairs, s.n
        m = len(f)
        # a set's fold follows the order of the runs, not its key: renaming or reordering the
        # factors must not change which sets are held out together
        by_run = np.argsort(np.argsort(s.first)) if len(s.first) == m else np.arange(m)
        self.part = np.random.default_rng(seed).permutation(m)[by_run] % folds
        sw = np.sqrt(self.w)[:, None]
        self.fold_g = [_syrk(f[self.part == k] * sw[self.part == k]) for k in range(folds)]
        self.g = np.sum(self.fold_g, axis=0)
        self._factors: dict[int, Factor] = {}
        self._leverage: np.ndarray | None = None

    def gram(self, fold: int = -1) -> np.ndarray:
        """The Gram matrix of every set (fold -1) or of every set outside ``fold``."""
        return self.g if fold < 0 else self.g - self.fold_g[fold]

    def factor(self, fold: int = -1) -> Factor:
        """``factor(self.gram(fold))``, once: the linear and log models, a refit and every
        cross-validation pass share the Gram matrices (only the right sides differ)."""
        if fold not in self._factors:
            self._factors[fold] = factor(self.gram(fold))
        return self._factors[fold]

    def leverage(self) -> np.ndarray:
        """Each set's leverage in the fit on every set, once: it depends on the columns and
        the weights only, so the linear and log fits share it."""
        if self._leverage is None:
            fac = self.factor()
            fb = self.f if fac.rank == self.f.shape[1] else self.f[:, fac.basic]
            lf = scipy.linalg.solve_triangular(fac.chol, fb.T, lower=True)
            self._leverage = self.w * np.einsum("ij,ij->j", lf, lf)
        return self._leverage


def fit_sets(
    s: SetStats, cols: Columns, log: bool = False, drift: Drift | None = None, hc3: bool = True
) -> Fit:
    """Weighted least squares of (drift-adjusted) set means on the model columns.  ``hc3=False``
    skips the sandwich (a model fitted only to be cross-validated)."""
    drift = drift if drift is not None else drift_within(s, log)
    f, names, pairs = cols.f, cols.names, cols.pairs
    idx = {n: i for i, n in enumerate(s.cov_names)}
    ybar = (s.lmean if log else s.mean).copy()
    gw = s.g_mean[:, [idx[n] for n in drift.names]]
    ybar -= gw @ drift.gamma
    w = s.n
    g = cols.g
    sol = solve_gram(g, f.T @ (w * ybar), cols.factor())
    m = len(ybar)
    e = ybar - f @ sol.beta
    rss = float(w @ (e * e))
    within = s.lss if log else s.ss
    df_pure = s.df_pure - len(drift.names)
    ss_pure = float(within.sum()) - float(
        drift.gamma @ (s.sgly if log else s.sgy).sum(axis=0)[[idx[n] for n in drift.names]]
        if drift.names
        else 0.0
    )
    s2_pure = ss_pure / df_pure if df_pure > 0 else float("nan")
    gp = _pinv(sol, len(g))
    df_b = m - sol.rank
    if df_b >= HC3_MIN_DF and hc3:
        cov = _hc3(f, w, e, cols.leverage(), gp, rss / df_b)
    else:
        cov = gp * _variance(df_b, rss, df_pure, s2_pure)
    mode, df = _mode(df_b, df_pure)
    s2_run = s2_pure if df_pure > 0 else (rss / df_b if df_b > 0 else float("nan"))
    if drift.names and df > 0:
        # the adjustment's own uncertainty reaches every effect
        b = gp @ (f.T @ (w[:, None] * gw))
        cov = cov + b @ drift.cov @ b.T
    smear = 1.0
    if log:
        fitted = f @ sol.beta
        smear = float((w * s.mean * np.exp(-fitted - gw @ drift.gamma)).sum() / w.sum())
    beta = sol.beta
    if exact := is_exact(rss, ss_pure, float(w.sum()), data_scale(ybar, log), df_b + df_pure):
        # no width to invent, and a smearing factor of 1 +- rounding is 1
        beta, cov, s2_run, smear = snap(beta, data_scale(ybar, log)), 0 * cov, 0.0, 1.0
        mode = EXACT_MODE
    grand = float(w @ ybar / w.sum())
    tss = float(w @ (ybar - grand) ** 2) + ss_pure
    r2 = 1 - (rss + ss_pure) / tss if tss > 0 else 0.0
    return Fit(
        names, beta, cov, df, mode, sol.rank, m, sol.null, s2_run, rss,
        log, pairs, drift, smear, r2, exact,
    )  # fmt: skip


def _mode(df_b: int, df_pure: int) -> tuple[str, int]:
    """Which variance the intervals use, and its degrees of freedom (docs/statistics.md)."""
    if df_b >= HC3_MIN_DF:
        return "HC3 on set means", df_b
    if df_b > 0:
        return "set-level variance", df_b
    if df_pure > 0:
        return "pure error", df_pure
    return "not assessable", 0


def _variance(df_b: int, rss: float, df_pure: int, s2_pure: float) -> float:
    if df_b > 0:
        return rss / df_b
    return s2_pure if df_pure > 0 else float("nan")


def _pinv(sol: Factor, p: int) -> np.ndarray:
    """Moore–Penrose inverse of G from the basic Cholesky factor: P G^- P."""
    gi = np.zeros((p, p))
    if sol.rank:
        inv = scipy.linalg.cho_solve((sol.chol, True), np.eye(sol.rank))
        gi[np.ix_(sol.basic, sol.basic)] = inv
    if sol.null.shape[1]:
        proj = np.eye(p) - sol.null @ sol.null.T
        gi = proj @ gi @ proj
    return gi


def _hc3(
    f: np.ndarray, w: np.ndarray, e: np.ndarray, h: np.ndarray, gp: np.ndarray, s2: float
) -> np.ndarray:
    """HC3 sandwich of the weighted set-mean regression (h: the leverages).  A set with
    leverage ~1 determines a direction alone (its residual is 0/0): it contributes the pooled
    set-level variance."""
    full = h > 1 - 1e-8
    u2 = np.where(full, w * s2, (w * e) ** 2 / np.where(full, 1.0, 1 - h) ** 2)
    meat = _syrk(f * np.sqrt(u2)[:, None])
    return gp @ meat @ gp


def nested_f(small: Fit, big: Fit, s2_pure: float | None = None, df_pure: int = 0) -> dict:
    """F test of the bigger model's extra columns, on set means; with a set-saturated big model
    the denominator is pure error."""
    extra = big.rank - small.rank
    df_b = big.sets - big.rank
    if extra <= 0:
        return {"F": None, "df": [0, 0], "p": None}
    if df_b > 0:
        den, dfd = big.rss_sets / df_b, df_b
    elif s2_pure and df_pure > 0:
        den, dfd = s2_pure, df_pure
    else:
        return {"F": None, "df": [extra, 0], "p": None}
    if big.exact or not den > 0:  # exact data: a ratio of rounding noise is no test
        return {"F": None, "df": [extra, dfd], "p": None}
    fstat = (small.rss_sets - big.rss_sets) / extra / den
    return {"F": float(fstat), "df": [extra, dfd], "p": float(f_sf(fstat, extra, dfd))}


def grouped_cv(s: SetStats, cols: Columns, log: bool, drift: Drift) -> float:
    """Cross-validated RMSE per run (µs), folds drawn over *sets*: every replicate of a test set
    is unseen, so lack of fit is not hidden by its own replicates.  NaN if ineligible."""
    f = cols.f
    m = len(f)
    folds = len(cols.fold_g)
    if f.shape[1] > m or m < folds:
        return float("nan")
    idx = {n: i for i, n in enumerate(s.cov_names)}
    adj = s.g_mean[:, [idx[n] for n in drift.names]] @ drift.gamma
    ybar = (s.lmean if log else s.mean) - adj
    w = s.n
    r_all = f.T @ (w * ybar)
    sq = 0.0
    for k in range(folds):
        te = cols.part == k
        r = r_all - f[te].T @ (w[te] * ybar[te])
        beta = solve_gram(cols.gram(k), r, cols.factor(k)).beta
        pred = f[te] @ beta
        if log:
            tr = ~te
            smear = (w[tr] * s.mean[tr] * np.exp(-f[tr] @ beta - adj[tr])).sum() / w[tr].sum()
            pred = np.exp(pred + adj[te]) * smear
            target = s.mean[te]
        else:
            target = ybar[te]
        sq += float((w[te] * (target - pred) ** 2).sum())
    return float(np.sqrt((sq + s.ss.sum()) / w.sum()))
