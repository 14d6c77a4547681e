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
from perflab.bisect.search import PointFailed, Step, bisect
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
