"""Set-level inference against statsmodels/scipy references and hand-made truths."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
from scipy import stats as sps

from perflab.analysis.bestset import recommend
from perflab.analysis.claims import Predictor, allowed, rows_of
from perflab.analysis.fits import (
    Columns,
    drift_within,
    fit_sets,
    model_matrix,
    solve_gram,
)
from perflab.analysis.models import infer
from perflab.analysis.noise import levene, noisy_sets, outliers
from perflab.analysis.setstats import collapse, covariates


def _runs(sets: int, reps: int, k: int, seed: int, noise: float = 0.02):
    rng = np.random.default_rng(seed)
    x = np.tile(rng.integers(0, 2, (sets, k)), (reps, 1))
    y = 1000 - 300 * x[:, 0] + 100 * x[:, 1] * x[:, 2]
    y = y * (1 + noise * rng.standard_normal(len(x)))
    return x, y, rng


def test_set_level_fit_equals_run_level_ols_and_hc3_matches_statsmodels() -> None:
    x, y, _ = _runs(60, 3, 5, 0)
    s, _ = collapse(y, x)
    fit = fit_sets(s, Columns(s, [f"f{j}" for j in range(5)], False, []))
    run = sm.OLS(y, model_matrix(x, False)).fit()
    assert np.allclose(fit.beta, run.params, atol=1e-9)  # sufficient statistics are exact
    ref = sm.WLS(s.mean, model_matrix(s.x, False), weights=s.n).fit(cov_type="HC3")
    assert fit.mode == "HC3 on set means" and fit.df == len(s.n) - 6
    assert np.allclose(fit.cov, ref.cov_params(), rtol=1e-8)


def test_within_set_drift_matches_fixed_effects_ols() -> None:
    x, y, rng = _runs(40, 4, 4, 1)
    t = np.sort(rng.random(len(y)) * 7200)[rng.permutation(len(y))]
    y = y + 20 * t / 3600  # +20 µs per hour
    cov, notes = covariates(t)
    assert list(cov) == ["hours"] and "time-of-day" in notes[0]  # 2 h: no day terms
    s, inv = collapse(y, x, cov)
    d = drift_within(s, log=False)
    dummies = np.eye(len(s.n))[inv]
    ref = sm.OLS(y, np.column_stack([cov["hours"], dummies])).fit(
        cov_type="cluster", cov_kwds={"groups": inv}
    )
    assert d.gamma[0] == pytest.approx(ref.params[0], rel=1e-9)
    assert np.sqrt(d.cov[0, 0]) == pytest.approx(ref.bse[0], rel=0.1)
    lo, hi = d.gamma[0] + np.array([-2.1, 2.1]) * np.sqrt(d.cov[0, 0])
    assert lo < 20 < hi


def test_pivoted_qr_finds_aliases_and_min_norm_is_order_free() -> None:
    rng = np.random.default_rng(2)
    a = rng.integers(0, 2, (30, 3)).astype(float)
    f = np.column_stack([np.ones(30), a, a[:, 0]])  # last column duplicates the first factor
    y = rng.standard_normal(30)
    sol = solve_gram(f.T @ f, f.T @ y)
    assert sol.rank == 4 and sol.null.shape == (5, 1)
    perm = [0, 4, 2, 3, 1]
    sol2 = solve_gram(f[:, perm].T @ f[:, perm], f[:, perm].T @ y)
    assert np.allclose(sol.beta[perm], sol2.beta, atol=1e-12)
    assert np.allclose(sol.beta, np.linalg.pinv(f) @ y, atol=1e-10)


def test_levene_and_outliers_match_the_references() -> None:
    x, y, rng = _runs(30, 4, 3, 3)
    y[5] *= 1.5  # one wild run
    s, inv = collapse(y, x)
    lv = levene(np.log(y), inv, s.n)
    groups = [np.log(y)[inv == g] for g in range(len(s.n)) if s.n[g] >= 2]
    assert lv is not None and lv["p"] == pytest.approx(sps.levene(*groups, center="mean").pvalue)
    out = outliers(y, inv, s)
    ref = sm.OLS(y, np.eye(len(s.n))[inv]).fit().outlier_test(method="bonf")
    bonf = np.asarray(ref)[:, 2]
    assert [o["run"] for o in out] == list(np.flatnonzero(bonf < 0.05))
    assert out[0]["run"] == 5 and out[0]["p_bonf"] == pytest.approx(bonf[5])


def test_uniform_noise_flags_almost_no_set_and_a_noisy_set_is_found() -> None:
    x, y, rng = _runs(60, 5, 6, 4)
    s, inv = collapse(y, x)
    assert len(noisy_sets(s)) <= 1
    bad = inv == 0
    y2 = y.copy()
    y2[bad] = s.mean[0] * (1 + 0.3 * rng.standard_normal(bad.sum()))
    s2, _ = collapse(y2, x)
    assert 0 in [r["index"] for r in noisy_sets(s2)]


def test_best_set_honours_requires_and_conflicts() -> None:
    rng = np.random.default_rng(5)
    x = np.tile(rng.integers(0, 2, (120, 5)), (2, 1))
    y = (1000 - 300 * x[:, 0] - 200 * x[:, 1] - 100 * x[:, 2]) * (
        1 + 0.02 * rng.standard_normal(len(x))
    )
    names = [f"f{j}" for j in range(5)]
    inf = infer(y, x, names)
    bad = np.zeros((5, 5), bool)
    bad[0, 1] = bad[1, 0] = True  # f0 conflicts with f1
    requires = [(2, 3)]  # f2 requires f3 (which costs nothing)
    rec = recommend(Predictor(inf.fits[inf.chosen], 5), names, bad, requires)
    chosen = rows_of(np.array([rec["key"]]), 5)
    assert allowed(chosen, bad, requires)[0]
    assert chosen[0, 0] == 1 and chosen[0, 1] == 0  # the bigger of the conflicting pair
    assert chosen[0, 2] == 0 or chosen[0, 3] == 1
    lo, hi = rec["speedup"]["ci"]
    assert lo < rec["speedup"]["ratio"] < hi


def test_a_model_with_more_parameters_than_sets_is_not_chosen() -> None:
    # the leak: 100 sets x 3, 20 factors; pairwise has 211 parameters
    x, y, _ = _runs(100, 3, 20, 6)
    inf = infer(y, x, [f"f{j:02d}" for j in range(20)])
    assert "211 parameters > 100 distinct sets" in inf.eligible["pairwise"]
    assert not inf.chosen.startswith("pairwise")
    assert inf.interactions_note and "not" in inf.interactions_note


def test_replicate_blocks_reach_the_analysis_and_adjust_for_a_slow_block() -> None:
    """A block that ran 100 µs slower for every set: the block term takes it, not the factors."""
    from perflab.analysis import analyze, from_frame
    from perflab.analysis.data import BLOCK_COLUMN

    rng = np.random.default_rng(3)
    sets = [(a, b, c) for a in (0, 1) for b in (0, 1) for c in (0, 1)]
    rows = []
    for block in range(3):
        for i in rng.permutation(len(sets)):
            a, b, c = sets[i]
            y = 1000 - 300 * a - 100 * b + (100 if block == 2 else 0) + rng.normal(0, 5)
            t = 1_700_000_000 + 60 * len(rows)
            rows.append(
                {"us_per_task": y, "a": a, "b": b, "c": c, BLOCK_COLUMN: block, "timestamp": t}
            )
    ds = from_frame(pd.DataFrame(rows), factors=["a", "b", "c"])
    assert ds.blocks is not None and set(ds.blocks) == {0, 1, 2}
    a = analyze(ds).to_json()
    assert "block_2" in a["drift_detail"]["terms"]
    assert abs(a["factors"]["a"]["effect_us"] + 300) < 15
    assert a["factors"]["a"]["significant"] and not a["factors"]["c"]["significant"]
