"""The analysis's fast paths (issue 18) give what the plain computations give."""

from __future__ import annotations

import numpy as np
import pytest
import statsmodels.api as sm
from scipy import stats as sps
from statsmodels.stats.multitest import multipletests

from perflab.analysis import stats as astats
from perflab.analysis.claims import Predictor
from perflab.analysis.data import Dataset
from perflab.analysis.fits import Columns, Fit, _syrk, fit_sets, model_matrix, solve_gram
from perflab.analysis.noise import noisy_sets, outliers
from perflab.analysis.paths import forbidden_pairs
from perflab.analysis.setstats import collapse, keys_of
from perflab.analysis.stats import adjust


def _plain_model_matrix(x: np.ndarray, pairs: bool) -> np.ndarray:
    z = 2.0 * np.asarray(x, float) - 1.0
    cols = [np.ones((len(z), 1)), z]
    if pairs:
        a, b = np.triu_indices(z.shape[1], 1)
        cols.append(z[:, a] * z[:, b])
    return np.hstack(cols)


def test_model_matrix_gram_and_keys_equal_the_plain_computations() -> None:
    rng = np.random.default_rng(0)
    x = rng.integers(0, 2, (200, 7)).astype(np.int8)
    for pairs in (False, True):
        assert np.array_equal(model_matrix(x, pairs), _plain_model_matrix(x, pairs))
    a = rng.standard_normal((50, 6))
    assert np.allclose(_syrk(a), a.T @ a, rtol=1e-13)
    assert np.allclose(_syrk(np.asfortranarray(a)), a.T @ a, rtol=1e-13)
    assert np.array_equal(keys_of(x), (x.astype(np.int64) << np.arange(7)).sum(axis=1))
    xf = np.asfortranarray(x)  # a dataset's matrix is often column-major
    assert np.array_equal(keys_of(xf), keys_of(x))


def test_pairwise_set_level_fit_equals_run_level_ols_and_statsmodels_hc3() -> None:
    rng = np.random.default_rng(1)
    k = 5
    every = (np.arange(1 << k)[:, None] >> np.arange(k)) & 1  # 32 sets, 16 parameters
    x = np.tile(every, (3, 1))
    y = (1000 - 300 * x[:, 0] + 100 * x[:, 1] * x[:, 2]) * (1 + 0.02 * rng.standard_normal(len(x)))
    s, _ = collapse(y, x)
    fit = fit_sets(s, Columns(s, [f"f{j}" for j in range(k)], True, []))
    run = sm.OLS(y, _plain_model_matrix(x, True)).fit()
    assert np.allclose(fit.beta, run.params, atol=1e-8)
    ref = sm.WLS(s.mean, _plain_model_matrix(s.x, True), weights=s.n).fit(cov_type="HC3")
    assert fit.mode == "HC3 on set means"
    assert np.allclose(fit.cov, ref.cov_params(), rtol=1e-7)


def test_noisy_sets_p_values_equal_one_f_test_per_set() -> None:
    rng = np.random.default_rng(2)
    x = np.tile(rng.integers(0, 2, (30, 5)), (4, 1))
    y = 1000 * (1 + 0.05 * rng.standard_normal(len(x)))
    s, inv = collapse(y, x)
    y[inv == 3] *= 1 + 0.5 * rng.standard_normal((inv == 3).sum())  # one noisy set
    s, _ = collapse(y, x)
    got = {r["index"]: r["p"] for r in noisy_sets(s)}
    assert 3 in got
    df = s.n - 1
    tot_ss, tot_df = s.lss[s.n >= 2].sum(), df[s.n >= 2].sum()
    for i, p in got.items():
        ratio = (s.lss[i] / df[i]) / ((tot_ss - s.lss[i]) / (tot_df - df[i]))
        one = sps.f.sf(ratio, df[i], tot_df - df[i])
        assert p == min(1.0, 2 * min(one, 1 - one))


def test_adjustment_leaves_untestable_claims_out_of_the_family() -> None:
    p = [0.001, 0.04, float("nan"), 0.03, 0.5, 0.0125]
    adj, sig = adjust(p, "holm", 0.05)
    ok = [v for v in p if v == v]
    rej, ref, _, _ = multipletests(ok, alpha=0.05, method="holm")  # a family of 5, not 6
    assert [a for a in adj if a == a] == list(ref)
    assert [s for s, v in zip(sig, p, strict=True) if v == v] == list(rej)
    assert sig[2] is False and adj[2] != adj[2]
    nothing, decided = adjust([float("nan")], "fdr_bh", 0.1)
    assert nothing[0] != nothing[0] and decided == [False]


def test_forbidden_pairs_from_distinct_sets_equal_the_run_level_count() -> None:
    rng = np.random.default_rng(3)
    x = rng.integers(0, 2, (300, 6)).astype(np.int8)
    x[:, 5] = x[:, 4] == 0  # 4 and 5 never together
    ds = Dataset(
        y=np.ones(300), x=x, factors=[f"f{j}" for j in range(6)], t=np.zeros(300), metric="m"
    )
    together = x.astype(np.int64).T @ x.astype(np.int64)
    expect = np.triu(together == 0, 1)
    assert np.array_equal(forbidden_pairs(ds), expect)
    assert forbidden_pairs(ds)[4, 5]


@pytest.mark.parametrize("pairs", [False, True])
def test_model_matrix_of_one_row(pairs: bool) -> None:
    x = np.array([[1, 0, 1, 1]], dtype=np.int8)
    assert np.array_equal(model_matrix(x, pairs), _plain_model_matrix(x, pairs))


def test_ranking_predictions_equal_the_model_matrix_ones() -> None:
    rng = np.random.default_rng(4)
    k = 6
    every = (np.arange(1 << k)[:, None] >> np.arange(k)) & 1
    x = np.tile(every, (2, 1))
    y = 1000 - 200 * x[:, 0] + 80 * x[:, 1] * x[:, 2] + 10 * rng.standard_normal(len(x))
    s, _ = collapse(y, x)
    for pairs in (False, True):
        pred = Predictor(fit_sets(s, Columns(s, [f"f{j}" for j in range(k)], pairs, [])), k)
        keys = np.arange(1 << k, dtype=np.int64)
        lin, est = pred.linear(keys)
        fast, fest = pred.ranking(keys)
        assert np.allclose(fast, lin, rtol=1e-12) and np.array_equal(est, fest)


def _plain_contrast(fit: Fit, c: np.ndarray, level: float = 0.95) -> dict[str, float]:
    """One contrast with scalar scipy calls (the code before the vectorised ``contrasts``)."""
    nan = float("nan")
    if not fit.estimable(c):
        return {"est": nan, "se": nan, "lo": nan, "hi": nan, "p": nan}
    est = float(c @ fit.beta)
    se = float(np.sqrt(max(c @ fit.cov @ c, 0.0))) if fit.df > 0 else nan
    if not np.isfinite(se):
        return {"est": est, "se": nan, "lo": nan, "hi": nan, "p": nan}
    q = float(sps.t.ppf(0.5 + level / 2, fit.df))
    # a zero standard error (exact data) tests nothing: no p (was 0 or 1; issue 43)
    p = float(2 * sps.t.sf(abs(est) / se, fit.df)) if se > 0 else nan
    return {"est": est, "se": se, "lo": est - q * se, "hi": est + q * se, "p": p}


def _same(a: dict[str, float], b: dict[str, float]) -> bool:
    return list(a) == list(b) and all(
        (x != x and y != y) or x == y for x, y in zip(a.values(), b.values(), strict=True)
    )


def test_vectorised_contrasts_equal_one_scalar_contrast_at_a_time() -> None:
    rng = np.random.default_rng(5)
    k = 5
    every = (np.arange(1 << k)[:, None] >> np.arange(k)) & 1
    # replicated and full rank; 12 sets for 16 columns (aliased); 4 sets (no df left either)
    cases = ((np.tile(every, (2, 1)), 0, True), (every[:12], 6, True), (every[:4], 12, False))
    for rows, nulls, df_left in cases:
        y = 1000 - 200 * rows[:, 0] + 50 * rows[:, 1] * rows[:, 2] + rng.standard_normal(len(rows))
        s, _ = collapse(y, rows)
        fit = fit_sets(s, Columns(s, [f"f{j}" for j in range(k)], True, []))
        assert fit.null.shape[1] == nulls and (fit.df > 0) == df_left
        cs = [np.eye(fit.p)[j] * 4.0 for j in range(fit.p)]
        cs += [np.zeros(fit.p), rng.standard_normal(fit.p)]
        got = fit.contrasts(cs)
        assert all(_same(g, _plain_contrast(fit, c)) for g, c in zip(got, cs, strict=True))
        assert _same(fit.contrast(cs[3]), _plain_contrast(fit, cs[3]))


def test_shared_gram_factorisations_equal_a_fresh_solve_per_right_side() -> None:
    rng = np.random.default_rng(6)
    k = 6
    x = rng.integers(0, 2, (40, k))  # 40 sets, 22 pairwise columns: folds rank deficient
    y = 1000 - 100 * x[:, 0] + rng.standard_normal(40)
    s, _ = collapse(y, x)
    cols = Columns(s, [f"f{j}" for j in range(k)], True, [])
    for fold in range(-1, len(cols.fold_g)):
        g = cols.g if fold < 0 else cols.g - cols.fold_g[fold]
        for r in (rng.standard_normal(len(g)), rng.standard_normal(len(g))):
            fresh, shared = solve_gram(g, r), solve_gram(cols.gram(fold), r, cols.factor(fold))
            assert fresh.rank == shared.rank and np.array_equal(fresh.beta, shared.beta)
            assert np.array_equal(fresh.null, shared.null)
    assert cols.factor(2) is cols.factor(2)
    # the leverages: diag of W^1/2 F G^+ F' W^1/2, shared by the linear and the log fit
    f, w = cols.f, s.n
    plain = w * np.einsum("ij,jk,ik->i", f, np.linalg.pinv(cols.g), f)
    assert np.allclose(cols.leverage(), plain, atol=1e-10)
    y2 = 1000 + 50 * x[:, 1] + rng.standard_normal(40)
    s2, _ = collapse(y2, x)
    for log in (False, True):
        shared = Columns(s2, [f"f{j}" for j in range(k)], True, [])
        fit_sets(s2, shared, not log)  # the other fit fills the caches first
        a, b = (
            fit_sets(s2, shared, log),
            fit_sets(s2, Columns(s2, shared.names[1 : k + 1], True, []), log),
        )
        assert np.array_equal(a.beta, b.beta) and np.array_equal(a.cov, b.cov)


def _bitwise(a: object, b: object) -> bool:
    x, y = np.asarray(a, float), np.asarray(b, float)
    return x.shape == y.shape and np.array_equal(x.view(np.int64), y.view(np.int64))


def test_t_and_f_functions_equal_scipy_stats_bit_for_bit() -> None:
    rng = np.random.default_rng(7)
    inf, nan = np.inf, np.nan
    x = np.concatenate([rng.standard_normal(200) * 5, [0.0, -0.0, inf, -inf, nan, 1e-300, 40]])
    df = np.concatenate([rng.integers(1, 500, 200).astype(float), [3, 1, 7, 2, 4, 0.5, 30]])
    for d in (df, 7.0, 0.0, -1.0, nan, inf):
        assert _bitwise(astats.t_sf(x, d), sps.t.sf(x, d))
        assert _bitwise(astats.t_cdf(x, d), sps.t.cdf(x, d))
    one = astats.t_sf(1.5, 3)
    assert isinstance(one, float) and _bitwise(one, sps.t.sf(1.5, 3))
    q = np.concatenate([rng.random(200), [0.0, 1.0, 0.975, -0.1, 1.1, nan, 0.5]])
    for d in (df, 5.0, 0.0, nan):
        assert _bitwise(astats.t_ppf(q, d), sps.t.ppf(q, d))
    for loc, scale in ((3.5, 0.2), (0.0, 0.0), (-2.0, 1e-9), (nan, 1.0)):
        for d in (1, 9, 0):
            (lo, hi), (rlo, rhi) = (
                astats.t_interval(0.95, d, loc, scale),
                sps.t.interval(0.95, d, loc=loc, scale=scale),
            )
            assert _bitwise(lo, rlo) and _bitwise(hi, rhi)
    fx = np.concatenate([np.abs(x), [-1.0, 0.0, inf, nan]])
    dn = np.concatenate([df, [2, 3, 4, 5]])
    dd = np.concatenate([df[::-1], [9, 0, 1, 2]])
    assert _bitwise(astats.f_sf(fx, dn, dd), sps.f.sf(fx, dn, dd))
    for a, b in ((4.0, 40), (0.0, 3), (2.0, 0.0)):
        assert _bitwise(astats.f_sf(fx, a, b), sps.f.sf(fx, a, b))


def test_welch_p_equals_scipy_ttest_ind() -> None:
    rng = np.random.default_rng(8)
    for _ in range(200):
        n1, n2 = rng.integers(3, 40, 2)
        a = rng.standard_normal(n1) * rng.uniform(0.1, 50) + rng.uniform(-20, 20)
        b = rng.standard_normal(n2) * rng.uniform(0.1, 50)
        assert _bitwise(astats.welch_p(a, b), sps.ttest_ind(a, b, equal_var=False).pvalue)
    same = np.full(5, 2.5)
    with pytest.warns(RuntimeWarning, match="Precision loss"):
        got = astats.welch_p(same, b := rng.standard_normal(4))  # one side exact: defined
    with pytest.warns(RuntimeWarning, match="Precision loss"):
        ref = sps.ttest_ind(same, b, equal_var=False).pvalue
    assert _bitwise(got, ref)
    # both sides exact: no test is defined (scipy's nan or 0 came from 0/0 and x/0)
    assert astats.welch_p(same, same + 1) is None and astats.welch_p(same, same) is None


def test_outliers_from_the_candidates_beyond_the_critical_value_equal_every_tail() -> None:
    rng = np.random.default_rng(10)
    x = np.tile(rng.integers(0, 2, (40, 5)), (25, 1))
    y = 1000 * (1 + 0.05 * rng.standard_normal(len(x)))
    y[[3, 77, 500]] *= (1.6, 0.5, 1.3)  # clear outliers, and one near the edge
    s, inv = collapse(y, x)
    got = outliers(y, inv, s)
    n_runs, df = len(y), len(y) - len(s.n) - 1
    e = y - s.mean[inv]
    h = 1.0 / s.n[inv]
    s2 = (float(s.ss.sum()) - e**2 / (1 - h)) / df
    r = e / np.sqrt(np.maximum(s2, 1e-300) * (1 - h))
    p = np.minimum(1.0, 2 * sps.t.sf(np.abs(r), df) * n_runs)
    plain = [(int(i), float(p[i])) for i in np.flatnonzero(p < 0.05)]
    assert [(o["run"], o["p_bonf"]) for o in got] == plain and {3, 77} <= {o["run"] for o in got}
