"""perflab's one home of statistical tests and intervals: every t, paired, Welch and bootstrap
interval, every test and every multiplicity correction is computed here, and no other module
imports ``scipy.stats`` or ``statsmodels.stats`` (``tests/analysis/test_one_stats.py``).
Model fits (statsmodels' OLS and RLM) stay with their callers; their tests are the fit's.

The t and F tails and quantiles come from ``scipy.special``: ``scipy.stats`` costs 1-2.5 s
to import on a busy machine (it builds every distribution's docstring), and the analysis
needs five functions of it. Each one here returns what the ``scipy.stats`` call it replaces
returns, bit for bit, including its edge cases (bad degrees of freedom, infinite or NaN
arguments): it calls the same ``scipy.special`` function the distribution object calls and
applies the same conditions around it (``tests/analysis/test_fast_paths.py`` compares them).
What only ``scipy.stats`` or statsmodels has (the bootstrap, the one-sample t-test, the
binomial interval, BH) is imported inside the function that needs it.
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np
from scipy import special


def t_sf(x: Any, df: Any) -> Any:
    """``scipy.stats.t.sf(x, df)``."""
    x, df = np.asarray(x, float), np.asarray(df, float)
    ok = df > 0
    out = np.where(ok & np.isfinite(x), special.stdtr(df, -x), 0.0)
    out = np.where(ok & (x == -np.inf), 1.0, out)
    return _scalar(np.where(~ok | np.isnan(x), np.nan, out))


def t_cdf(x: Any, df: Any) -> Any:
    """``scipy.stats.t.cdf(x, df)``."""
    x, df = np.asarray(x, float), np.asarray(df, float)
    ok = df > 0
    out = np.where(ok & np.isfinite(x), special.stdtr(df, x), 0.0)
    out = np.where(ok & (x == np.inf), 1.0, out)
    return _scalar(np.where(~ok | np.isnan(x), np.nan, out))


def t_ppf(q: Any, df: Any, loc: Any = 0.0, scale: Any = 1.0) -> Any:
    """``scipy.stats.t.ppf(q, df, loc, scale)``."""
    q, df = np.asarray(q, float), np.asarray(df, float)
    loc, scale = np.asarray(loc, float), np.asarray(scale, float)
    ok = (df > 0) & (scale > 0) & (loc == loc)
    with np.errstate(invalid="ignore"):  # inf * 0 where the scale is bad (NaN there anyway)
        out = np.where(ok & (q > 0) & (q < 1), special.stdtrit(df, q) * scale + loc, np.nan)
        out = np.where(ok & (q == 0), -np.inf * scale + loc, out)
        out = np.where(ok & (q == 1), np.inf * scale + loc, out)
    return _scalar(out)


def t_interval(confidence: float, df: Any, loc: Any = 0.0, scale: Any = 1.0) -> tuple[Any, Any]:
    """``scipy.stats.t.interval(confidence, df, loc, scale)``."""
    if not 0 <= confidence <= 1:
        raise ValueError("confidence must be in [0, 1]")
    alpha = np.asarray(confidence)
    return t_ppf((1.0 - alpha) / 2, df, loc, scale), t_ppf((1.0 + alpha) / 2, df, loc, scale)


def mean_ci(
    values: Any, level: float = 0.95, floor: float | None = None
) -> tuple[float, float | None, float | None]:
    """Mean and its Student-t interval (None with one value); ``floor`` clips the interval
    of a quantity that cannot go below it (a time or a rate cannot be negative). perflab's
    one mean-with-interval: analysis, studies, tune and benches call this."""
    v = np.asarray(values, float)
    m = float(v.mean())
    if len(v) < 2:
        return m, None, None
    se = float(v.std(ddof=1)) / math.sqrt(len(v))
    if se == 0:
        return m, m, m
    lo, hi = t_interval(level, len(v) - 1, loc=m, scale=se)
    return m, float(lo if floor is None else max(lo, floor)), float(hi)


def f_sf(x: Any, dfn: Any, dfd: Any) -> Any:
    """``scipy.stats.f.sf(x, dfn, dfd)``."""
    x, dfn, dfd = np.asarray(x, float), np.asarray(dfn, float), np.asarray(dfd, float)
    ok = (dfn > 0) & (dfd > 0)
    inside = ok & (x > 0) & (x < np.inf)
    with np.errstate(invalid="ignore"):
        out = np.where(inside, special.fdtrc(dfn, dfd, np.where(inside, x, 1.0)), 0.0)
    out = np.where(ok & (x <= 0), 1.0, out)
    return _scalar(np.where(~ok | np.isnan(x), np.nan, out))


def welch_p(a: np.ndarray, b: np.ndarray) -> float | None:
    """The two-sided p of ``scipy.stats.ttest_ind(a, b, equal_var=False)`` (1-D, two or more
    values each), with its warning when the values are nearly identical. perflab's one Welch
    test: the analysis and the compare gate both call it.

    None when both sides are constant (exact data): with no variance on either side the
    t statistic is 0/0 or ±inf and no test is defined (scipy returns nan or 0 with a
    precision warning). The caller says what exact data mean for it: the gate decides on
    the exact difference, the analysis counts the claim as untestable."""
    a, b = np.asarray(a, float), np.asarray(b, float)
    if np.ptp(a) == 0 and np.ptp(b) == 0:
        return None
    (m1, v1), (m2, v2) = _mean_var(a), _mean_var(b)
    n1, n2 = a.shape[0], b.shape[0]
    vn1, vn2 = v1 / n1, v2 / n2
    with np.errstate(divide="ignore", invalid="ignore"):
        df = (vn1 + vn2) ** 2 / (vn1**2 / (n1 - 1) + vn2**2 / (n2 - 1))
        df = np.where(np.isnan(df), 1.0, df)
        t = np.divide(m1 - m2, np.sqrt(vn1 + vn2))
    return float(2 * special.stdtr(df, -np.abs(t)))


def welch_ci(a: np.ndarray, b: np.ndarray, confidence: float = 0.95) -> tuple[float, float]:
    """The Welch t interval of mean(a) − mean(b) (``ttest_ind(a, b, equal_var=False)``'s
    ``confidence_interval``), two or more values each; ``welch_p`` is its test."""
    a, b = np.asarray(a, float), np.asarray(b, float)
    (m1, v1), (m2, v2) = _mean_var(a), _mean_var(b)
    vn1, vn2 = v1 / a.shape[0], v2 / b.shape[0]
    with np.errstate(divide="ignore", invalid="ignore"):
        df = (vn1 + vn2) ** 2 / (vn1**2 / (a.shape[0] - 1) + vn2**2 / (b.shape[0] - 1))
    lo, hi = t_interval(confidence, df, loc=m1 - m2, scale=np.sqrt(vn1 + vn2))
    return float(lo), float(hi)


def paired_t(diff: np.ndarray, confidence: float) -> tuple[float, float, float]:
    """(p, CI low, CI high) of the mean of paired differences ``diff``: the one-sample t-test
    against 0 and its t interval, so the CI excludes 0 exactly when p < 1 − confidence.
    Constant differences give the point and p 1 (all zero) or 0: no test is defined."""
    d = float(diff.mean())
    if np.ptp(diff) == 0:
        return (1.0 if d == 0 else 0.0), d, d
    from scipy import stats as sps  # 1-2.5 s to import: only where a paired test is made

    res = sps.ttest_1samp(diff, 0.0)
    ci = res.confidence_interval(confidence_level=confidence)
    return float(res.pvalue), float(ci.low), float(ci.high)


def bootstrap_ci(
    data: tuple[np.ndarray, ...], statistic: Any, **options: Any
) -> tuple[float, float]:
    """(low, high) of ``scipy.stats.bootstrap(data, statistic, **options)``'s interval:
    ``options`` are the bootstrap's own (method, confidence_level, n_resamples, rng or
    random_state, vectorized)."""
    from scipy import stats as sps

    res = sps.bootstrap(data, statistic, **options)
    return float(res.confidence_interval.low), float(res.confidence_interval.high)


def percentile_ci(resampled: Any, confidence: float = 0.95) -> tuple[float, float]:
    """The percentile-bootstrap interval of a statistic's resampled values (NaN ones left
    out), for resamplings scipy's ``bootstrap`` cannot express (whole runs of an ANOVA,
    ratios of group means)."""
    tail = round(50 * (1 - confidence), 12)  # 2.5 exactly for 95 %, as np.percentile is given
    lo, hi = np.nanpercentile(resampled, [tail, 100 - tail])
    return float(lo), float(hi)


def clopper_pearson(k: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """Exact binomial CI of a rate k/n."""
    from scipy import stats as sps

    ci = sps.binomtest(k, n).proportion_ci(confidence_level=confidence, method="exact")
    return float(ci.low), float(ci.high)


def wilson_ci(k: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """Wilson's score interval of a rate k/n (statsmodels' ``proportion_confint``): nearer
    its nominal coverage than the exact one, for a rate read off a bench's seeds."""
    from statsmodels.stats.proportion import proportion_confint

    lo, hi = proportion_confint(k, n, alpha=1 - confidence, method="wilson")
    return float(lo), float(hi)


def kendall_tau(a: Any, b: Any) -> tuple[float, float]:
    """(tau, p) of ``scipy.stats.kendalltau(a, b)``: how alike two rankings are, and the p
    of independent rankings (exact for small samples without ties)."""
    from scipy import stats as sps

    res = sps.kendalltau(a, b)
    return float(res.statistic), float(res.pvalue)


def nested_f(small: tuple[float, float], big: tuple[float, float]) -> tuple[float, float]:
    """(F, p) of a linear model against one nested in it (``anova_lm(small, big)``), each
    given as (residual sum of squares, residual degrees of freedom): do the big model's
    extra terms (an interaction, say) explain more than noise?"""
    (ss_s, df_s), (ss_b, df_b) = small, big
    f = ((ss_s - ss_b) / (df_s - df_b)) / (ss_b / df_b)
    return float(f), float(f_sf(f, df_s - df_b, df_b))


def norm_ppf(q: float) -> float:
    """``scipy.stats.norm.ppf(q)``: the normal quantile of a sample-size approximation (the
    same ``ndtri`` the distribution calls, bit for bit, also at 0, 1 and outside)."""
    return float(special.ndtri(q))


def norm_cdf(x: float) -> float:
    """``scipy.stats.norm.cdf(x)`` (the same ``ndtr``): e.g. a normal test's power."""
    return float(special.ndtr(x))


def z_quantile(confidence: float) -> float:
    """The two-sided normal quantile of ``confidence``, ``norm.ppf((1 + confidence) / 2)``:
    the half-width of a normal interval in standard errors (``Z95`` at 0.95)."""
    return norm_ppf((1 + confidence) / 2)


#: The half-width of a 95 % normal interval in standard errors (1.95996…): perflab's one z
#: constant; anything else calls ``z_quantile``.
Z95 = z_quantile(0.95)


def chi2_ppf(q: float, df: float) -> float:
    """``scipy.stats.chi2.ppf(q, df)``: a variance's interval, a segmentation's penalty."""
    from scipy import stats as sps

    return float(sps.chi2.ppf(q, df))


def adjust(p: list[float], method: str, alpha: float) -> tuple[list[float], list[bool]]:
    """Adjusted p-values and decisions: Holm (``method`` "holm", ``holm`` below) or, for
    "fdr_bh", statsmodels' ``multipletests``; NaN entries (untestable claims) stay NaN /
    False and do not count in the family."""
    arr = np.asarray(p, float)
    ok = np.isfinite(arr)
    adj = np.full(len(arr), np.nan)
    sig = np.zeros(len(arr), bool)
    if ok.any():
        if method == "holm":
            padj, rej = holm(arr[ok], alpha)
        else:
            from statsmodels.stats.multitest import multipletests  # ~0.7 s to import

            rej, padj, _, _ = multipletests(arr[ok], alpha=alpha, method=method)
        adj[ok], sig[ok] = padj, rej
    return [float(v) for v in adj], [bool(v) for v in sig]


def bonferroni_level(alpha: float, family: int) -> float:
    """The level each comparison of a family of ``family`` is tested at, so that the chance
    of any false alarm in the family stays at most ``alpha`` (Bonferroni: the union bound).
    A family of one (or none) is tested at ``alpha``."""
    return alpha / max(1, family)


def split_level(alpha: float, others: int, share: float) -> tuple[float, float]:
    """(each other's level, the main one's level): a Bonferroni split of ``alpha`` weighted
    to one main comparison, ``others`` comparisons sharing ``share`` of it and the main one
    keeping the rest (all of it when there are no others). The levels add up to ``alpha``:
    the sequential gate's early looks against its last (compare/stats.py, precision.py)."""
    if others < 1:
        return 0.0, alpha
    return bonferroni_level(alpha * share, others), alpha * (1 - share)


def spent_level(alpha: float, planned: int, used: int) -> float:
    """The level of comparison number ``used`` (from 1) of a sequence planned at ``planned``:
    ``alpha / planned`` for the first ``planned − 1``, then the last share halved for each
    further one, so that the levels add up to at most ``alpha`` however many are made
    (Bonferroni over an open-ended sequence: bisect's comparisons)."""
    share = bonferroni_level(alpha, planned)
    extra = used - (planned - 1)
    return share if extra <= 0 else share / 2**extra


def halving_level(alpha: float, done: int) -> float:
    """The level of round ``done`` (from 0) of an open-ended sequence of tests whose levels
    halve: ``alpha / 2``, ``alpha / 4``, … — they add up to less than ``alpha`` however many
    rounds are made (the atlas's confirmation rounds of an undecided step)."""
    return alpha / 2 ** (done + 1)


def holm_levels(alpha: float, family: int) -> np.ndarray:
    """The level of each step of Holm's step-down test of ``family`` hypotheses, smallest p
    first: ``alpha / family``, ``alpha / (family − 1)``, …, ``alpha``."""
    return alpha / np.arange(family, 0, -1)


def bonferroni(p: np.ndarray, family: int) -> np.ndarray:
    """Bonferroni-adjusted p-values of tests drawn from a family of ``family`` (which may be
    larger than ``p``: the outlier test computes tails only for the runs that can be hits)."""
    return np.minimum(1.0, p * family)


def holm(p: np.ndarray, alpha: float) -> tuple[np.ndarray, np.ndarray]:
    """Holm's step-down adjusted p-values and rejections at ``alpha``, the same arithmetic
    as statsmodels' ``multipletests(method="holm")`` (tests/analysis/test_claims.py holds
    them equal). Written out because statsmodels runs a full ``gc.collect()`` in every Holm
    call: ~45-60 ms in a process holding pandas, and an ``analyze`` makes about nine."""
    order = np.argsort(p)
    ps = p[order]
    n = len(ps)
    steps = np.arange(n, 0, -1)
    above = np.nonzero(ps > holm_levels(alpha, n))[0]
    reject = np.arange(n) < (above[0] if above.size else n)
    padj = np.minimum(np.maximum.accumulate(ps * steps), 1.0)
    out_p, out_r = np.empty(n), np.empty(n, bool)
    out_p[order], out_r[order] = padj, reject
    return out_p, out_r


def fallback(p: list[float], alpha: float) -> tuple[list[float], list[bool]]:
    """Wiens' fallback procedure over hypotheses in a pre-specified order (``p`` in that
    order), equal weights: H_j is tested at ``alpha / m`` plus the level of H_(j-1) if that
    was rejected, so a sequence of rejections carries its level forward. Family-wise error
    at most ``alpha`` for any order fixed before the data tested (Wiens 2003). NaN entries
    (untestable) are not tested and carry nothing. Returns adjusted p-values (the least
    ``alpha`` at which each is rejected, exact: the decisions change only at the ratios
    p_i / (k w)) and the decisions at ``alpha``."""
    arr = np.asarray(p, float)
    ok = np.flatnonzero(np.isfinite(arr))
    m = len(ok)

    def rejected(a: float) -> np.ndarray:
        out, carry = np.zeros(len(arr), bool), 0.0
        for j in ok:
            level = a / m + carry
            out[j] = bool(arr[j] <= level)
            carry = level if out[j] else 0.0
        return out

    # a hair above each ratio: the sum of k levels a / m rounds below p at the ratio itself
    ratios = {min(1.0, arr[j] * m / k * (1 + 1e-12)) for j in ok for k in range(1, m + 1)}
    cuts = sorted(ratios | {1.0})
    adj = np.where(np.isfinite(arr), 1.0, np.nan)
    for a in reversed(cuts):  # from 1 down: the last level each is still rejected at
        adj[rejected(a)] = a
    return [float(v) for v in adj], [bool(v) for v in rejected(alpha)]


def _mean_var(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The mean and the ddof=1 variance, computed as scipy.stats' ``_var`` does."""
    mean = np.mean(a, axis=0, keepdims=True)
    dev = a - mean
    with np.errstate(divide="ignore", invalid="ignore"):
        rel = np.max(np.abs(dev), axis=0, keepdims=True) / np.abs(mean)
        if np.any((rel < np.finfo(float).eps * 10) & (a.shape[0] > 1)):
            warnings.warn(
                "Precision loss occurred in moment calculation due to catastrophic "
                "cancellation. This occurs when the data are nearly identical. Results may be "
                "unreliable.",
                RuntimeWarning,
                stacklevel=3,
            )
        var = np.mean(dev**2, axis=0)
        n = np.asarray(a.shape[0], dtype=float)
        var *= n / (n - 1)
    return np.mean(a, axis=0), var


def _scalar(out: np.ndarray) -> Any:
    return out[()] if out.ndim == 0 else out


def studentized_external(fit: Any) -> tuple[np.ndarray, np.ndarray]:
    """|externally studentized residuals| and leverages of an OLS fit, in closed form:
    statsmodels' ``resid_studentized_external`` refits the model once per run (n fits, most
    of a tune's reduction time); leaving run i out gives the residual variance
    ``(df s² − e_i²/(1 − h_i)) / (df − 1)`` without a refit. Equal to statsmodels' to float
    rounding (``tests/tune/test_knockout.py``). The fit is the caller's (an OLS results object)."""
    hat = np.asarray(fit.get_influence().hat_matrix_diag)
    e = np.asarray(fit.resid)
    df = float(fit.df_resid)
    with np.errstate(divide="ignore", invalid="ignore"):
        s2_i = (float(np.sum(e**2)) - e**2 / (1 - hat)) / (df - 1)
        r = np.abs(e / np.sqrt(s2_i * (1 - hat)))
    return r, hat
