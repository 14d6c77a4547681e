"""Analysis against synthetic campaigns with known true effects (perflab.analysis.synthetic)."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import statsmodels.formula.api as smf

from conftest import perflab
from perflab import PerflabError
from perflab.analysis import analyze, deltas, from_frame, synthetic
from perflab.analysis.claims import Predictor
from perflab.analysis.deltas import naive_deltas
from perflab.analysis.models import infer
from perflab.analysis.paths import Values, shapley
from perflab.analysis.setstats import covariates


def _ds(runs: int = 3000, k: int = 8, seed: int = 1, **kw):
    return from_frame(synthetic.generate(runs, k=k, seed=seed, **kw))


def true_ame(ds, f: str) -> float:
    """Average over the data's sets of T(X+f) - T(X-f), from the known truth."""
    j = ds.factors.index(f)
    on, off = ds.x.copy(), ds.x.copy()
    on[:, j], off[:, j] = 1, 0
    return float(np.mean(synthetic.truth(on) - synthetic.truth(off)))


@pytest.fixture(scope="module")
def result():
    ds = _ds(replicates=3, drift_per_hour=0.5)
    return ds, analyze(ds)


def test_effects_recover_the_truth(result) -> None:
    ds, a = result
    for f in ("f00", "f01", "f02", "f03"):
        v = a["factors"][f]
        assert abs(v["effect_us"] - true_ame(ds, f)) < 12, (f, v["effect_us"], true_ame(ds, f))
        assert v["ci_low"] < v["effect_us"] < v["ci_high"]
        assert abs(v["mean_delta_us"] - true_ame(ds, f)) < 25
        lo, hi = v["mean_delta_ci"]
        assert lo < v["mean_delta_us"] < hi


def test_either_or_pair_is_the_largest_positive_interaction(result) -> None:
    _, a = result
    top = a["interactions"][0]
    assert {top["a"], top["b"]} == {"f00", "f01"}
    assert 200 < top["effect_us"] < 330 and top["ci_low"] > 150  # truth +250 (+ f03's state)


def test_null_factors_cis_cover_zero_at_the_expected_rate() -> None:
    covered = total = 0
    for seed in range(6):
        ds = _ds(runs=1200, k=12, seed=seed, replicates=2)
        a = analyze(ds, n_boot=100)
        for f in synthetic.names(12)[4:]:
            v = a["factors"][f]
            covered += v["ci_low"] <= 0 <= v["ci_high"]
            total += 1
    assert total == 48
    assert covered / total >= 0.85  # nominal 95%


def test_state_dependent_factor_helps_slow_runs_and_hurts_fast_ones(result) -> None:
    ds, _ = result
    d = deltas(ds)
    f03 = d[d["factor"] == "f03"]
    assert (
        np.average(f03[f03["before"] > 650]["delta"], weights=f03[f03["before"] > 650]["weight"])
        < -60
    )
    assert (
        np.average(f03[f03["before"] < 490]["delta"], weights=f03[f03["before"] < 490]["weight"])
        > 20
    )


def test_shapley_sums_exactly(result) -> None:
    ds, a = result
    sh = a["shapley"]
    assert sum(sh["values"].values()) == pytest.approx(sh["total_us"], abs=1e-9)
    # any from/to pair too
    b = analyze(ds, from_set=["f04"], to_set=["f00", "f01", "f02", "f03", "f04", "f05"], n_boot=50)
    assert sum(b["shapley"]["values"].values()) == pytest.approx(b["shapley"]["total_us"], abs=1e-9)
    assert set(b["shapley"]["values"]) == {"f00", "f01", "f02", "f03", "f05"}


def test_shapley_of_an_additive_game_is_each_effect() -> None:
    ds = from_frame(synthetic.generate(400, k=4, seed=3, noise=0.0, replicates=4))
    inf = infer(ds.y, ds.x, ds.factors, ds.t)
    values = Values(inf.stats, Predictor(inf.fits["pairwise"], len(ds.factors)))
    phi, measured, n = shapley(values, 0, [2])  # f02 alone: exactly its effect
    assert phi[2] == pytest.approx(-100.0) and measured == n == 2


def test_best_set_is_truly_near_best(result) -> None:
    ds, a = result
    rows = np.array(list(itertools.product((0, 1), repeat=len(ds.factors))))
    true_best = synthetic.truth(rows).min()
    chosen = np.array([[int(f in a["best_set"]) for f in ds.factors]])
    assert synthetic.truth(chosen)[0] <= true_best * 1.05
    assert not {"f00", "f01"} <= set(a["best_set"])  # the either-or: only one is worth it


def test_paths_go_from_base_to_best_with_rates(result) -> None:
    _, a = result
    for name in ("greedy", "nice"):
        steps = a["paths"][name]
        assert steps[0]["factor"] is None
        assert {s["factor"] for s in steps[1:]} == set(a["best_set"])
        for s in steps:
            assert s["tasks_per_s"] == pytest.approx(1e6 / s["us_per_task"])
    greedy = a["paths"]["greedy"]
    assert greedy[1]["factor"] == "f00"  # the biggest single saving first


def test_models_match_statsmodels_and_see_drift(result) -> None:
    ds, a = result
    terms = a["drift_detail"]["terms"]
    assert terms["hours"]["ci_low"] < 0.5 < terms["hours"]["ci_high"]  # the drift we put in
    assert set(terms) == {"hours", "cos_day", "sin_day"}  # 100 h: time of day is estimable
    # on drift-adjusted runs, the set-level fits are exactly run-level least squares
    cov, _ = covariates(ds.t)
    y = ds.y - sum(terms[n]["estimate"] * cov[n] for n in terms)
    df = pd.DataFrame(ds.x, columns=ds.factors).assign(y=y)
    ref = smf.ols("y ~ " + " + ".join(ds.factors), df).fit()
    for f in ds.factors:
        assert a["models"]["linear"]["coef"][f] == pytest.approx(ref.params[f], rel=1e-6)
    pair = smf.ols("y ~ (" + " + ".join(ds.factors) + ")**2", df).fit()
    assert a["models"]["pairwise"]["r2"] == pytest.approx(pair.rsquared, rel=1e-6)
    assert a["models"]["pairwise"]["r2"] > a["models"]["linear"]["r2"]
    assert a["better_model"].startswith("pairwise")


def test_deltas_equal_the_naive_all_pairs(result) -> None:
    ds = _ds(runs=400, k=5, seed=2, replicates=3)
    fast, slow = deltas(ds), naive_deltas(ds)
    for f in ds.factors:
        a = fast[fast["factor"] == f]
        b = slow[slow["factor"] == f]
        assert a["weight"].sum() == len(b)
        assert np.average(a["delta"], weights=a["weight"]) == pytest.approx(b["delta"].mean())


def test_pca_of_sequences_opposes_the_either_or_pair() -> None:
    df = synthetic.generate(2700, k=8, seed=4, design="sequences", replicates=2)
    ds = from_frame(df)
    ds.meta.sequences = df.attrs["sequences"]
    a = analyze(ds, n_boot=50)
    pca = a["pca"]
    assert pca["n_vectors"] == len(ds.sequences) == 2700 // (2 * 9)
    evr = pca["explained_variance_ratio"]
    assert sum(evr) == pytest.approx(1.0) and evr[0] == max(evr)
    pc1 = {f: v[0] for f, v in pca["loadings"].items()}
    # whichever of f00/f01 comes first takes the big saving: PC1 sets them against each other
    assert np.sign(pc1["f00"]) == -np.sign(pc1["f01"])
    assert sorted(pc1, key=lambda f: -abs(pc1[f]))[:2] == sorted(
        ["f00", "f01"], key=lambda f: -abs(pc1[f])
    )


def test_conditional_effects_without_factors(result) -> None:
    ds, _ = result
    a = analyze(ds, without=["f00"], n_boot=50)
    assert "f00" not in a["factors"]
    # without f00, f01 is not spoiled by the either-or: its full saving shows
    assert a["factors"]["f01"]["effect_us"] < -250


def test_bad_inputs(tmp_path: Path) -> None:
    with pytest.raises(PerflabError, match="empty"):
        from_frame(pd.DataFrame(columns=["us_per_task", "a"]))
    df = synthetic.generate(50, k=4)
    with pytest.raises(PerflabError, match="no 'us_per_task' column"):
        from_frame(df.drop(columns=["us_per_task"]))
    with pytest.raises(PerflabError, match="no ok run"):
        from_frame(df.assign(status="failed"))
    with pytest.warns(UserWarning, match="'f03' never varies"):
        ds = from_frame(df.assign(f03=1))
    assert "f03" not in ds.factors and ds.dropped == ["f03"]


def test_cli_on_csv_and_errors(tmp_path: Path) -> None:
    csv = tmp_path / "syn.csv"
    synthetic.generate(600, k=5, seed=5, replicates=2).to_csv(csv, sep=";", index=False)
    proc = perflab("analyze", str(csv), "--json")
    assert proc.returncode == 0, proc.stderr
    a = json.loads(proc.stdout)
    for key in (
        "factors",
        "interactions",
        "best_set",
        "best_us",
        "base_us",
        "shapley",
        "paths",
        "models",
        "pca",
    ):
        assert key in a
    assert set(a["factors"]["f00"]) >= {
        "effect_us",
        "ci_low",
        "ci_high",
        "mean_delta_us",
        "n_pairs",
    }
    human = perflab("analyze", str(csv))
    assert human.returncode == 0 and "f00" in human.stdout and "Shapley" in human.stdout
    bad = tmp_path / "bad.csv"
    bad.write_text("timestamp;status;us_per_task;a\n1;failed;;1\n2;failed;;0\n")
    proc = perflab("analyze", str(bad))
    # the runs failed (issue 43): the question has no answer, exit 1 like a failed run
    assert (
        proc.returncode == 1 and "no ok run" in proc.stderr and "2 of 2 runs failed" in proc.stderr
    )
    nometric = tmp_path / "nometric.csv"
    nometric.write_text("timestamp;a\n1;1\n")
    proc = perflab("analyze", str(nometric))
    assert proc.returncode == 2 and "no metric column" in proc.stderr


def test_small_campaign_uses_the_model_that_cross_validates() -> None:
    # 11 distinct sets of 4 factors, one run each: the pairwise model (1 + 4 + 6 parameters)
    # is exactly saturated, so its uncertainty is unknown (null CIs, not zero-width ones).
    from perflab.campaign.designs.fractional import model_matrix

    full = np.array(list(itertools.product((0, 1), repeat=4)))
    rng = np.random.default_rng(7)
    while True:
        rows = full[rng.choice(16, 11, replace=False)]
        if np.linalg.matrix_rank(model_matrix(2.0 * rows - 1, interactions=True)) == 11:
            break
    df = pd.DataFrame(rows, columns=synthetic.names(4)).assign(
        status="ok",
        timestamp=1.7e9 + np.arange(11) * 60.0,
        us_per_task=synthetic.truth(rows) * (1 + 0.03 * rng.standard_normal(11)),
    )
    a = analyze(from_frame(df), n_boot=50)
    json.dumps(a.to_json(), allow_nan=False)  # valid JSON: no NaN anywhere
    pair, lin = a["models"]["pairwise"], a["models"]["linear"]
    assert pair["r2"] == pytest.approx(1.0)
    assert all(r["ci_low"] is None and r["ci_high"] is None for r in a["interactions"])
    # however it cross-validates, a saturated model cannot carry uncertainty: not eligible
    assert lin["r2"] < 1
    assert not a["prediction_model"].startswith("pairwise")
    assert all(v["ci_low"] is not None for v in a["factors"].values())
