"""The noisy bisection on a synthetic truth: a git repository of 41 commits with two planted
slow commits (+10 % and +20 %), measured in-process from each commit's declared cost with
seeded noise through the compare gate's sequential paired test."""

from __future__ import annotations

import math
import random
from pathlib import Path

import pytest
from toyrepo import declared_cost, make_repo

from perflab.bisect.commits import commits_between
from perflab.bisect.search import Measure, PointFailed, Step, bisect
from perflab.bisect.synthetic import simulated_measure

SEEDS = range(10)


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    root = tmp_path_factory.mktemp("toy") / "clone"
    return root, make_repo(root)


def _seeds(costs: list[float], truth: set[int], fixed: bool) -> dict[str, int]:
    found = false = runs = 0
    for seed in SEEDS:
        search = bisect(len(costs), simulated_measure(costs, seed=seed, fixed=fixed), alpha=0.05)
        named = {c.index for c in search.culprits}
        found += truth <= named
        false += bool(named - truth)
        runs += search.runs
    return {"found": found, "false": false, "runs": runs}


def test_both_planted_culprits_are_found_with_fewer_runs_than_fixed_n(
    repo: tuple[Path, list[str]],
) -> None:
    root, shas = repo
    commits = commits_between(root, shas[0], shas[-1])
    assert [c.sha for c in commits] == shas and len(commits) >= 40
    costs = [declared_cost(root, c.sha) for c in commits]
    truth = {i for i in range(1, len(costs)) if costs[i] != costs[i - 1]}
    assert truth == {13, 29}
    seq, fixed = _seeds(costs, truth, False), _seeds(costs, truth, True)
    print(f"\nseeds {len(SEEDS)}: sequential {seq}; fixed-n {fixed}")
    assert seq["found"] >= 9 and seq["false"] <= 1
    assert fixed["found"] >= 9 and fixed["false"] <= 1
    assert seq["runs"] < fixed["runs"]


def test_shares_add_up_to_the_step_and_their_intervals_hold_the_truth() -> None:
    costs = [1.0] * 13 + [1.1] * 16 + [1.32] * 12
    search = bisect(len(costs), simulated_measure(costs, seed=3), alpha=0.05)
    assert [c.index for c in search.culprits] == [13, 29]
    whole = math.log(1.32)
    truths = (math.log(1.1) / whole, math.log(1.2) / whole)
    for c, true in zip(search.culprits, truths, strict=True):
        assert c.share_low <= true <= c.share_high
    assert abs(sum(c.share for c in search.culprits) - 1) < 0.1
    assert "alpha/" in search.error_statement()


def test_culprits_anywhere_in_the_range_are_found_in_nine_of_ten_seeds() -> None:
    found = false = 0
    for seed in SEEDS:
        rng = random.Random(seed)
        i, j = sorted(rng.sample(range(1, 41), 2))
        costs = [1.0 * (1.1 if k >= i else 1) * (1.2 if k >= j else 1) for k in range(41)]
        named = {c.index for c in bisect(41, simulated_measure(costs, seed=seed)).culprits}
        found += {i, j} <= named
        false += bool(named - {i, j})
    assert found >= 9 and false <= 1


def test_a_range_with_no_step_says_so_and_bisects_nothing() -> None:
    calls: list[tuple[int, int]] = []
    inner = simulated_measure([1.0] * 41, seed=0)

    def measure(a: int, b: int, level: float) -> Step:
        calls.append((a, b))
        return inner(a, b, level)

    search = bisect(41, measure)
    assert search.outcome == "no step" and not search.culprits
    assert calls == [(0, 40)]


def test_a_point_that_does_not_build_is_skipped_and_named() -> None:
    costs = [1.0] * 20 + [1.25] * 21
    search = bisect(41, simulated_measure(costs, seed=1, broken=(20,)))
    assert 20 in search.skipped and "does not build" in search.skipped[20]
    (c,) = search.culprits
    assert c.index in (20, 21) and (c.candidates == [20, 21] or c.index == 21)


def test_a_step_that_is_spread_thin_dissolves() -> None:
    """+2.5 % on each of ten commits: the ends differ by 28 %, no single commit holds it."""
    costs = [1.0] * 15 + [1.025**k for k in range(1, 11)] + [1.025**10] * 16
    search = bisect(41, simulated_measure(costs, seed=2, sigma=0.01, n_max=30))
    assert search.outcome == "dissolved" and search.dissolved and not search.culprits


def test_an_end_that_does_not_run_stops_before_any_bisection() -> None:
    search = bisect(5, simulated_measure([1, 1, 2, 2, 2], broken=(0,)))
    assert search.outcome == "end failed" and 0 in search.skipped


def test_the_levels_spend_at_most_alpha() -> None:
    from perflab.bisect.search import Budget

    b = Budget(0.05, 7)
    assert sum(b.next() for _ in range(100)) <= 0.05 + 1e-12
    with pytest.raises(PointFailed):
        simulated_measure([1, 1], broken=(1,))(0, 1, 0.01)


def test_a_split_beyond_max_culprits_follows_the_larger_side_and_says_so() -> None:
    costs = [1.0] * 10 + [1.2] * 10 + [1.44] * 10 + [1.728] * 11  # steps at 10, 20, 30
    search = bisect(41, simulated_measure(costs, seed=4), max_culprits=2)
    assert len(search.culprits) <= 2 and {c.index for c in search.culprits} <= {10, 20, 30}
    assert any("more than 2 culprits" in n for n in search.notes)
    assert len(search.steps) <= search.planned


def _scripted(costs: list[float]) -> Measure:
    """A measurement without noise: a ratio of 5 % or more is decided, one of 1–5 % stays
    inconclusive at the most runs, less is no difference."""

    def measure(a: int, b: int, level: float) -> Step:
        r = costs[b] / costs[a]
        verdict = "slower" if r >= 1.05 else "inconclusive" if r > 1.01 else "no difference"
        return Step(a, b, r, r / 1.04, r * 1.04, verdict, 8, level)

    return measure


def _faint_and_big(faint_at: int = 10, big_at: int = 30) -> list[float]:
    return [(1.03 if k >= faint_at else 1.0) * (1.3 if k >= big_at else 1.0) for k in range(41)]


def test_an_undecided_side_is_followed_and_where_it_stays_undecided_is_said() -> None:
    search = bisect(41, _scripted(_faint_and_big()), max_culprits=3)
    assert [c.index for c in search.culprits] == [30] and search.outcome == "found"
    assert any(s.b <= 20 for s in search.steps[1:])  # the undecided left half was probed
    (u,) = search.undecided
    assert (u["a"], u["b"]) == (9, 10) and "adjacent points" in u["why"]
    assert "undecided at the most runs" in u["why"] and u["low"] < u["ratio"] < u["high"]
    assert search.to_dict()["undecided"] == search.undecided


def test_an_undecided_side_beyond_max_culprits_is_kept_with_why() -> None:
    search = bisect(41, _scripted(_faint_and_big()), max_culprits=1)
    assert [c.index for c in search.culprits] == [30]
    (u,) = search.undecided
    assert (u["a"], u["b"]) == (0, 20) and "not followed: 1 branches already open" in u["why"]
    assert all(s.b > 20 or s.a == 0 and s.b in (20, 40) for s in search.steps)


def test_a_step_made_only_of_undecided_parts_ends_undecided_not_with_a_culprit() -> None:
    costs = [(1.03 if k >= 10 else 1.0) * (1.03 if k >= 30 else 1.0) for k in range(41)]
    search = bisect(41, _scripted(costs), max_culprits=3)
    assert search.outcome == "undecided" and not search.culprits
    assert [(u["a"], u["b"]) for u in search.undecided] == [(9, 10), (29, 30)]


def test_the_undecided_ranges_are_in_the_text_and_json_with_their_labels() -> None:
    from perflab.bisect.driver import Point
    from perflab.bisect.render import lines, stage_dict
    from perflab.spec import RunSpec

    search = bisect(41, _scripted(_faint_and_big()), max_culprits=3)
    points = [Point(f"k{i}", f"commit {i}", lambda: RunSpec()) for i in range(41)]
    st = stage_dict("commits", points, search, {})
    (u,) = st["undecided"]
    assert (u["from"], u["to"], u["to_label"]) == ("k9", "k10", "commit 10")
    result = {"package": "p", "good": "a", "bad": "b", "metric": "m", "stages": [st],
              "state": "s", "reused": 0}  # fmt: skip
    text = "\n".join(lines(result))
    assert "undecided commit 9 → commit 10: 1.030×; its interval" in text
