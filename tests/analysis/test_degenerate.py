"""Issue 43: degenerate data gives exact, honest answers. Each case once made a number of
nothing (p = 0 for an effect of -7.9e-16, "80.0 predicted (measured mean 100.0)", no effect
for two estimable factors) or must keep saying what it cannot know."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
import pytest
from degenerate import dataset, full

from perflab.analysis.analyze import analyze
from perflab.analysis.data import from_frame
from perflab.errors import PerflabError

#: The issue's case: {a} failed in every run, {}, {b}, {a, b} measured 100 twice.
ISSUE = [set(), {"b"}, {"a", "b"}]
#: What an exact fit's estimate says instead of a test (analysis/exact.py).
EXACT_CLAIM = "exact data: no test"


def _numbers(obj):
    if isinstance(obj, dict):
        for v in obj.values():
            yield from _numbers(v)
    elif isinstance(obj, list):
        for v in obj:
            yield from _numbers(v)
    elif isinstance(obj, float):
        yield obj


def check_honest(result: dict) -> None:
    """Every reported number finite (None where unknown), every interval holding its
    estimate, no p = 0 and no claim where an effect is 0."""
    assert all(math.isfinite(v) for v in _numbers(result))
    for rows in (result["factors"].values(), result["interactions"]):
        for v in rows:
            if v["effect_us"] is not None and v["ci_low"] is not None:
                assert v["ci_low"] <= v["effect_us"] <= v["ci_high"], v
            if v["effect_us"] == 0.0:
                assert not v["significant"]
            assert v["p"] is None or v["p"] > 0 or v["effect_us"] != 0.0, v


@pytest.mark.parametrize("seed", range(6))
def test_the_issues_exact_case_is_exact_whatever_the_campaign_order(seed: int) -> None:
    """Failed on today's code: in 1 seed of 4 "80.0 predicted", effects -7.9e-16 at p = 0
    "significant after correction"; in the others no effect for a or b at all."""
    res = analyze(dataset(ISSUE, ["a", "b"], seed=seed)).to_json()
    for f in ("a", "b"):
        v = res["factors"][f]
        assert v["effect_us"] == 0.0 and v["p"] is None and v["claim"] == EXACT_CLAIM, v
        assert not v["significant"]
    assert res["summary"]["lines"]["untreated"] == "100.0 µs/task predicted (measured mean 100.0)"
    assert res["summary"]["speedup"] == 1.0 and res["summary"]["speedup_ci"] is None
    assert "no treatment is recommended" in res["summary"]["lines"]["speed-up"]
    assert res["inference"]["uncertainty"].startswith("exact data")
    check_honest(res)


def test_a_nonzero_exact_effect_is_reported_exactly_without_a_test() -> None:
    truth = {"a": -10.0, "b": -5.0, "c": 0.0}
    value = lambda s: 100.0 + sum(truth[f] for f in s)  # noqa: E731
    a = analyze(dataset(full(list(truth)), list(truth), reps=2, value=value))
    res = a.to_json()
    for f, d in truth.items():
        v = res["factors"][f]
        assert v["effect_us"] == pytest.approx(d, abs=1e-9) and v["p"] is None
        assert v["claim"] == EXACT_CLAIM and v["ci_low"] == v["ci_high"] == v["effect_us"]
    assert res["best_set"] == ["a", "b"]  # c saves nothing: pruned, said so
    assert [d["why"] for d in res["best_dropped"]] in ([], ["exact data: saves nothing"])
    assert res["summary"]["speedup"] == pytest.approx(100 / 85)
    assert res["summary"]["lines"]["speed-up"] == "1.18x (exact data: no interval)"
    fitted = a.fitted(a.inference.chosen)
    fit = a.model
    assert fit.exact
    pred = np.exp(fitted) if fit.log else fitted
    assert np.allclose(pred, a.ds.y, rtol=1e-9)
    check_honest(res)


def test_a_constant_metric_is_exact_and_claims_nothing() -> None:
    res = analyze(dataset(full(["a", "b"]), ["a", "b"], reps=3, value=lambda s: 7.0)).to_json()
    assert all(v["effect_us"] == 0.0 and v["p"] is None for v in res["factors"].values())
    assert res["best_set"] == [] and res["summary"]["base_us"] == pytest.approx(7.0, rel=1e-12)
    check_honest(res)


@pytest.mark.parametrize("scale", [1e12, 1e-9])
def test_huge_and_tiny_values_are_judged_on_their_own_scale(scale: float) -> None:
    """Exactness is relative to the data: 1e-9 µs is not "zero residuals" for noisy tiny
    data, and 1e12 exact bytes are exact."""
    value = lambda s: scale * (2.0 - 0.5 * ("a" in s))  # noqa: E731
    exact = analyze(dataset(full(["a", "b"]), ["a", "b"], reps=2, value=value)).to_json()
    assert exact["factors"]["a"]["effect_us"] == pytest.approx(-0.5 * scale, rel=1e-9)
    assert exact["factors"]["a"]["claim"] == EXACT_CLAIM
    assert exact["factors"]["b"]["effect_us"] == 0.0
    noisy = analyze(dataset(full(["a", "b"]), ["a", "b"], 4, value, noise=0.01)).to_json()
    assert noisy["factors"]["a"]["claim"] != EXACT_CLAIM
    assert noisy["factors"]["a"]["p"] is not None and noisy["factors"]["a"]["significant"]
    check_honest(exact)
    check_honest(noisy)


def test_a_perfectly_collinear_pair_is_aliased_not_claimed() -> None:
    sets = [set(), {"a", "b"}, {"c"}, {"a", "b", "c"}]
    res = analyze(dataset(sets, ["a", "b", "c"], reps=3, noise=0.02)).to_json()
    for f in ("a", "b"):
        v = res["factors"][f]
        assert not v["estimable"] and v["p"] is None and not v["significant"]
        assert v["aliases"], v
    check_honest(res)


def test_one_run_per_set_gives_finite_honest_numbers() -> None:
    ds = dataset(full(["a", "b", "c"]), ["a", "b", "c"], reps=1, noise=0.05, blocks=False)
    check_honest(analyze(ds).to_json())


def test_a_factor_at_one_level_is_left_out_and_a_single_set_is_refused() -> None:
    df = pd.DataFrame(
        {"run_id": [f"r{i}" for i in range(6)], "timestamp": T0s(6), "status": "ok",
         "us_per_task": [100.0, 90, 100, 90, 100, 90], "a": [0, 1] * 3, "b": [1] * 6}
    )  # fmt: skip
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        ds = from_frame(df)
    assert ds.factors == ["a"] and ds.dropped == ["b"] and any("'b'" in str(x.message) for x in w)
    check_honest(analyze(ds).to_json())
    single = df.assign(a=0)
    with pytest.raises(PerflabError, match="no factor varies"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from_frame(single)


def T0s(n: int) -> list[float]:  # noqa: N802
    return [1.7e9 + 10 * i for i in range(n)]


def test_all_runs_failed_is_refused_with_the_cause() -> None:
    df = pd.DataFrame(
        {"run_id": ["r0", "r1"], "timestamp": T0s(2), "status": "failed",
         "us_per_task": [None, None], "a": [0, 1]}
    )  # fmt: skip
    with pytest.raises(PerflabError, match="no ok run .*: 2 of 2 runs failed") as exc:
        from_frame(df)
    assert exc.value.exit_code == 1  # the runs failed: no answer, not bad input


def test_a_failed_base_set_is_not_measured_and_not_invented() -> None:
    """The base {} failed in every run: its mean is "not measured", the prediction (an
    exact additive fit of the other sets) is said as one."""
    sets = [{"a"}, {"b"}, {"a", "b"}]
    value = lambda s: 100.0 - 10 * ("a" in s) - 5 * ("b" in s)  # noqa: E731
    res = analyze(dataset(sets, ["a", "b"], reps=2, value=value)).to_json()
    assert res["summary"]["base_measured_us"] is None
    assert "(not measured)" in res["summary"]["lines"]["untreated"]
    check_honest(res)


def test_one_factor_and_sixty_factors() -> None:
    one = analyze(dataset([set(), {"a"}], ["a"], reps=3, noise=0.02)).to_json()
    assert one["factors"]["a"]["p"] is not None
    check_honest(one)
    names = [f"f{j:02d}" for j in range(60)]
    rng = np.random.default_rng(1)
    sets = [{f for f in names if rng.random() < 0.5} for _ in range(70)]
    many = analyze(dataset(sets, names, reps=1, noise=0.02, blocks=False)).to_json()
    assert len(many["factors"]) == 60
    check_honest(many)
