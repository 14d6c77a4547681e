"""The reduction after a search and the nice levels (tune/reduce.py), on synthetic truths."""

from __future__ import annotations

import numpy as np
import pytest

from perflab.campaign.designs.base import Constraints
from perflab.factors.catalog import CATEGORIES
from perflab.tune.optuna_search import OptunaSearch
from perflab.tune.reduce import level_sets, reduce, support, without
from perflab.tune.truths import TRUTHS


def _reduce(truth: str, chosen: list[str], seed: int, runs: int = 60) -> tuple[set[str], list]:
    tr = TRUTHS[truth]
    rng = np.random.default_rng(seed)
    return reduce(
        set(chosen),
        [],
        tr.cons,
        lambda sets: list(tr.measure([sorted(s) for s in sets], rng)),
        runs,
        np.random.default_rng(seed + 1),
    )


def test_reduction_drops_nulls_and_harmful_factors_and_keeps_the_real_ones() -> None:
    """The sparse truth's optimum plus its six nulls and two harmful factors, 40 seeds: the
    data must keep the real members and drop the rest in nearly every seed (no search runs:
    every member is tried alone, in up to three looks at ALPHA / 3 each)."""
    tr = TRUTHS["sparse"]
    real = ["x0", "x1", "x2", "x3", "x4", "x5", "L=2"]
    junk = [f for f in tr.factors if f.startswith(("n", "h"))]
    clean = whole = 0
    for seed in range(40):
        kept, evidence = _reduce("sparse", real + junk, seed)
        clean += not (kept & set(junk))
        whole += set(real) <= kept
        assert {f for e in evidence for f in e.factors} == set(real + junk)
        for e in evidence:
            if e.verdict not in ("untested", "unresolved"):
                assert e.ci_low is not None and e.ci_low <= e.ratio <= e.ci_high
                assert e.reason.startswith("kept" if e.kept else "dropped")
    assert clean >= 32 and whole >= 36, (clean, whole)


def test_too_few_runs_keep_every_member_and_say_so() -> None:
    kept, evidence = _reduce("sparse", ["x0", "x1", "n00"], 0, runs=4)
    assert kept == {"x0", "x1", "n00"}
    assert all(e.verdict == "untested" and "not tested" in e.reason for e in evidence)


def test_support_orders_by_evidence_not_by_name() -> None:
    """Renaming the factors (so the names sort the other way) keeps the order of evidence."""
    tr = TRUTHS["traps"]
    rng = np.random.default_rng(0)
    sets = [sorted(f for f in tr.factors[:8] if rng.random() < 0.5) for _ in range(40)]
    ys = tr.measure(sets, rng)
    obs = [(frozenset(s), float(y)) for s, y in zip(sets, ys, strict=True)]
    rename = {f: f"z{9 - j}" for j, f in enumerate(tr.factors[:8])}
    obs2 = [(frozenset(rename[f] for f in s), y) for s, y in obs]
    cons2 = Constraints(list(rename.values()), None, {rename[f]: "safe_config" for f in rename})
    cons1 = Constraints(tr.factors[:8], None, dict.fromkeys(tr.factors[:8], "safe_config"))
    order1 = [f for f, _ in support(obs, tr.factors[:8], cons1)]
    order2 = [f for f, _ in support(obs2, sorted(rename.values()), cons2)]
    assert [rename[f] for f in order1] == order2 and len(order1) == 8


def test_without_drops_what_requires_a_dropped_factor() -> None:
    cons = Constraints(["a", "b", "c"], None)
    cons.requires = {("a", "b"), ("c", "a")}
    assert without({"a", "b", "c"}, {"b"}, cons) == set()
    assert without({"a", "b", "c"}, {"c"}, cons) == {"a", "b"}


def test_levels_cut_the_set_by_category_and_nest() -> None:
    tr = TRUTHS["traps"]
    best = {"a", "b", "c", "d", "L=2"}
    levels = level_sets(best, tr.cons)
    assert [cat for cat, _ in levels] == list(CATEGORIES)
    sets = [s for _, s in levels]
    assert sets[0] == {"d"} and sets[-1] == best
    assert all(a <= b for a, b in zip(sets, sets[1:], strict=False))


@pytest.mark.parametrize("seed", [0, 1])
def test_the_tune_reports_each_level_measured_against_the_truth(seed: int) -> None:
    """The Pareto list on the traps truth: each level's set (the recommended set cut to the
    level, plus what its knock-in look showed needed there) uses only the level's categories,
    is measured in block-paired runs with a real interval, and where a look reached it, its
    true time is within 5% of the level's true optimum; the top level is the recommended set
    (bench/best_set.py counts the agreement over 20 seeds)."""
    tr = TRUTHS["traps"]
    rng = np.random.default_rng(seed + 300)
    res = OptunaSearch(tr.factors, tr.cons, 300, seed=seed).run(
        lambda sets, stage, reason: list(tr.measure(sets, rng))
    )
    assert [lv["level"] for lv in res.levels] == list(CATEGORIES)
    assert res.levels[-1]["set"] == res.best
    base = tr.time(tr.matrix([[]]))[0]
    for i, lv in enumerate(res.levels):
        assert all(CATEGORIES.index(tr.categories[f]) <= i for f in lv["set"])
        gained = {f for e in lv["added"] for f in e["factors"]}
        assert set(lv["set"]) <= set(res.best) | gained
        assert all(e["verdict"] == "slower" and e["ci_low"] > 1 for e in lv["added"])
        if not lv["set"]:
            assert lv["measured"] is None
            continue
        m = lv["measured"]
        assert m["ci_low"] <= m["ratio"] <= m["ci_high"] and m["pairs"] >= 3
        t = tr.time(tr.matrix([lv["set"]]))[0]
        print(
            lv["level"], lv["set"], f"true {t:.0f} vs level optimum {tr.optimum(lv['level']):.0f}"
        )
        assert t <= base  # no level's set is slower than doing nothing
        if lv["tried"] is not None:  # a level its knock-in look reached: at its optimum
            assert t <= 1.05 * tr.optimum(lv["level"]), lv
        # each costlier distinct level says what it gains over the last nicer one, and its
        # interval holds the true gain
        g = lv.get("over_nicer")
        if g is not None:
            nicer = next(x for x in res.levels if x["level"] == g["level"])
            true_gain = tr.time(tr.matrix([nicer["set"]]))[0] / t
            assert g["level"] in CATEGORIES[:i] and g["confidence"] > 0.95
            assert g["ci_low"] <= true_gain <= g["ci_high"], (g, true_gain)
    assert res.levels[0]["tried"], "the budget affords the lowest level's look"
    steps = [lv for lv in res.levels if lv["set"]]
    distinct = [
        b for a, b in zip([None, *steps], steps, strict=False) if not a or a["set"] != b["set"]
    ]
    assert sum("over_nicer" in lv for lv in res.levels) == len(distinct) - 1
