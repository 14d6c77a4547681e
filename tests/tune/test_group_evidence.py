"""Issue 44: evidence belongs to what was tested. A helpful factor worth 7 % tried in one
group with do-nothing factors: the group's "slower" is never any member's own."""

from __future__ import annotations

import numpy as np
import pytest

from perflab.tune import reduce as reduce_mod
from perflab.tune.final import TuneResult
from perflab.tune.knockout import Evidence
from perflab.tune.reduce import reduce, shown_needed
from perflab.tune.render import render
from perflab.tune.truths import TRUTHS

STRONG = ["x0", "x1", "x2", "x3", "L=2"]
WEAK = ["g", "n00", "n01", "n02", "n03", "n04", "n05"]


def _search_runs(rng: np.random.Generator) -> list[tuple[frozenset[str], float]]:
    """A search's runs that vary only the strong members: the weak ones, always in, have no
    evidence (p 1) and are tried as one group."""
    tr = TRUTHS["grouped"]
    sets = [sorted(WEAK + [f for f in STRONG if rng.random() < 0.7]) for _ in range(40)]
    return [(frozenset(s), float(y)) for s, y in zip(sets, tr.measure(sets, rng), strict=True)]


def _reduce(seed: int, runs: int, spare: int) -> tuple[set[str], list]:
    tr = TRUTHS["grouped"]
    rng = np.random.default_rng(seed)
    obs = _search_runs(rng)
    return reduce(
        set(STRONG + WEAK),
        obs,
        tr.cons,
        lambda sets: list(tr.measure([sorted(s) for s in sets], rng)),
        runs,
        np.random.default_rng(seed + 1),
        spare,
    )


@pytest.mark.parametrize("seed", range(6))
def test_no_member_carries_its_groups_evidence(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """One look only, no spare runs (the looks ran out, as in the issue's 300-run tune): the
    group of g and six nulls is found slower (g is worth 7 %) but cannot be split. Each member
    is "kept with {group}, not resolved", with no ratio of its own, and none is recommended."""
    monkeypatch.setattr(reduce_mod, "LOOKS", 1)
    kept, evidence = _reduce(seed, 40, spare=0)
    for e in evidence:
        if e.kept and e.verdict == "slower":
            assert len(e.factors) == 1, f"{e.factors} kept on one group's evidence: {e.reason}"
    nulls = set(WEAK) - {"g"}
    unresolved = [e for e in evidence if e.verdict == "unresolved"]
    for e in evidence:
        if set(e.factors) & nulls and e.kept:
            assert len(e.factors) == 1 and e.verdict != "slower", e
    for e in unresolved:
        assert e.ratio is None and e.reason.startswith("kept with {") and "not resolved" in e.reason
        assert e.group and set(e.factors) < set(e.group)
    rec = shown_needed(kept, evidence, TRUTHS["grouped"].cons)
    assert not rec & nulls
    whole = [e for e in evidence if set(e.factors) == set(WEAK)]
    assert not whole or whole[0].verdict != "slower"
    if unresolved:  # the group was slower: every member unresolved, none recommended
        assert {f for e in unresolved for f in e.factors} == set(WEAK), evidence
    res = TuneResult(sorted(rec), None, 0, [], [], evidence=evidence, fastest=sorted(kept))
    out = res.to_dict()
    assert set(out["not_shown_needed"]) == kept - rec
    assert {u["factor"] for u in out["unresolved"]} == kept - rec
    assert all(u["runs_to_resolve"] > 0 for u in out["unresolved"])
    text = render({**out, "metric": "us", "measured_why": "not measured"})
    for f in kept - rec:
        assert f"  {f}: ~" in text


def test_spare_runs_split_the_group_before_anything_else() -> None:
    """With the final blocks' spare runs the slower group is split: g is shown needed on its
    own in most seeds, and a null is recommended in at most one."""
    found = false = 0
    for seed in range(8):
        kept, evidence = _reduce(seed, 24, spare=80)
        assert not any(e.verdict == "unresolved" for e in evidence)
        rec = shown_needed(kept, evidence, TRUTHS["grouped"].cons)
        # a null recommended is a false "slower": the looks hold that at 5% family-wise
        # (at most 1 of 8 seeds; P(2 or more) is 0.06 at exactly 5%, less with the 2% bar)
        false += bool(rec & (set(WEAK) - {"g"}))
        found += "g" in rec
    assert found >= 5 and false <= 1, (found, false)


def test_a_group_kept_inconclusive_names_the_group_for_each_member() -> None:
    """Seen in the real HTEX tune at 300 runs: two members always dropped together, kept for
    too few runs. Each unresolved entry names the group and says the figures are the group's."""
    from perflab.tune.knockout import _reason

    why = _reason(True, "inconclusive", (0.913, 0.769, 1.084), 1.0, 111, 0, "blind")
    both = Evidence(["a", "b"], True, "inconclusive", 0.913, 0.769, 1.084, 0.978, 111, why)
    res = TuneResult(["c"], None, 0, [], [], evidence=[both], fastest=["a", "b", "c"])
    out = res.to_dict()["unresolved"]
    assert [u["factor"] for u in out] == ["a", "b"]
    for u in out:
        assert u["group"] == ["a", "b"]
        assert u["reason"].startswith("kept with {a, b}, not resolved apart: ")
