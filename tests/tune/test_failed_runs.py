"""Issue 43: a failed run never contributes a number to a tune. Penalties steer the search
(optuna is told the trial failed) and stay inside it: never a measurement, never an interval."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import perflab
from perflab.campaign.designs.base import Constraints
from perflab.tune.optuna_search import OptunaSearch


def _search(fails: set[frozenset[str]], value: float = 100.0) -> dict:
    """A 40-run optuna tune of a, b where every set in ``fails`` fails (NaN) and every
    other set measures exactly ``value``."""

    def measure(sets: list[list[str]], stage: str, reason: str) -> list[float]:
        return [math.nan if frozenset(s) in fails else value for s in sets]

    cands = ["a", "b"]
    return OptunaSearch(cands, Constraints(cands, None), 40, seed=0).run(measure).to_dict()


def test_all_runs_failed_gives_no_speed_up_and_no_evidence() -> None:
    every = {frozenset(s) for s in ([], ["a"], ["b"], ["a", "b"])}
    res = _search(every)
    assert res["measured"] is None
    assert res["measured_why"].startswith("the base set failed in")
    assert res["evidence"] == [] and res["dropped"] == []  # nothing judged on no number


def test_a_failed_base_gives_no_speed_up() -> None:
    res = _search({frozenset()})
    assert res["measured"] is None and "the base set failed" in res["measured_why"]


def test_one_failed_set_is_never_recommended_nor_a_number() -> None:
    res = _search({frozenset(["a"])}, 100.0)
    assert res["best_set"] != ["a"]
    assert res["measured"] is not None and res["measured"]["ratio"] == 1.0
    for lv in res["levels"]:
        for v in (lv.get("measured") or {}).values():
            assert v is None or math.isfinite(v)


def test_pairs_with_a_failed_side_pair_nothing() -> None:
    from perflab.tune.final import measured

    base = np.array([10.0, math.nan, 10.0, 10.0])
    other = np.array([5.0, 5.0, math.nan, 5.0])
    sp, why = measured(base, other)
    assert sp is not None and sp.pairs == 2 and why == ""
    sp, why = measured(np.array([math.nan] * 3), other[:3])
    assert sp is None and why == "the base set failed in 3 of 3 runs"
    sp, why = measured(base[:2], np.array([math.nan, math.nan]))
    assert sp is None and "failed in" in why


def test_tune_whose_every_run_fails_exits_1_with_the_cause(tmp_path: Path) -> None:
    """The issue's case: `echo nan` as the score. It used to exit 0 with "speed-up 1.00x
    (95% CI 1.00-1.00, 8 pairs)" and drop `a` on a ratio never measured."""
    r = perflab(
        "tune", "t", "--command", "echo nan", "--factors", "a,b", "--budget", "40",
        "--metric", "us_per_task",
        cwd=tmp_path, env={"PERFLAB_HOME": str(tmp_path / "home")},
    )  # fmt: skip
    assert r.returncode == 1, r.stderr[-2000:]
    last = r.stderr.strip().splitlines()[-1]
    assert "the base set failed in" in last and "not a finite number" in last, last
    assert "speed-up" not in r.stdout
    res = json.loads((tmp_path / "home" / "tune-t.json").read_text())
    assert res["measured"] is None and res["dropped"] == []


def test_a_deterministic_score_is_exact_in_the_tune_without_tests() -> None:
    """`echo 100` for every set: the pairs' ratio is exact (it printed "95% CI 1.00-1.00"),
    and a knock-out of equal runs is no test (it printed "Holm p 0.788")."""
    res = _search(set(), 100.0)
    assert res["measured"]["exact"] and res["measured"]["ratio"] == 1.0
    for e in res["evidence"]:
        assert "Holm p" not in e["reason"], e
        assert e["verdict"] == "untested" or "exact data: no test" in e["reason"], e
    assert res["best_set"] == []  # nothing saves time: nothing recommended


def test_a_deterministic_saving_is_kept_on_its_measured_ratio() -> None:
    def measure(sets: list[list[str]], stage: str, reason: str) -> list[float]:
        return [100.0 * (0.5 if "a" in s else 1.0) for s in sets]

    cands = ["a", "b"]
    res = OptunaSearch(cands, Constraints(cands, None), 40, seed=0).run(measure).to_dict()
    assert res["best_set"] == ["a"]
    assert res["measured"]["exact"] and res["measured"]["ratio"] == pytest.approx(2.0)


_RUN = st.one_of(st.just(math.nan), st.floats(1e-9, 1e12))


@settings(max_examples=200, deadline=None, database=None)
@given(st.lists(st.tuples(_RUN, _RUN), min_size=1, max_size=10))
def test_a_failed_run_never_becomes_part_of_a_measured_speed_up(pairs: list) -> None:
    """Any blocks of (base, set) runs, some failed: a speed-up only from the ok pairs, every
    number of it finite and its interval holding it; else no speed-up and a reason."""
    from perflab.tune.final import measured

    base, other = (np.array(v, float) for v in zip(*pairs, strict=True))
    good = sum(math.isfinite(a) and math.isfinite(b) for a, b in pairs)
    sp, why = measured(base, other)
    if good < 2:
        assert sp is None and why
        return
    assert sp is not None and sp.pairs == good and why == ""
    assert all(math.isfinite(v) for v in (sp.ratio, sp.ci_low, sp.ci_high, sp.base_us))
    assert sp.ci_low <= sp.ratio * (1 + 1e-12) and sp.ratio <= sp.ci_high * (1 + 1e-12)
