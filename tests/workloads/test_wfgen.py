"""Workflow instances from WfCommons recipes and their list-scheduled ideal makespan."""

from __future__ import annotations

import pytest

from perflab import PerflabError
from perflab.workloads.wfgen import generate, list_schedule, lower_bound

pytest.importorskip("wfcommons")

#: a diamond: 0 -> 1, 2 -> 3
DIAMOND = ((), (0,), (0,), (1, 2))


def test_the_list_schedule_of_a_diamond() -> None:
    runtimes = [1.0, 2.0, 3.0, 1.0]
    assert list_schedule(runtimes, DIAMOND, 1) == pytest.approx(7.0)
    assert list_schedule(runtimes, DIAMOND, 2) == pytest.approx(5.0)  # 1 + max(2, 3) + 1
    assert lower_bound(runtimes, DIAMOND, 2) == pytest.approx(5.0)


def test_the_longest_remaining_path_goes_first() -> None:
    # 0 -> 2 (long chain), 1 alone: on one worker either order ends at 1 + 1 + 10 = 12; on
    # two workers the chain's head must start first: 1 + 10 = 11
    parents = ((), (), (0,))
    assert list_schedule([1.0, 1.0, 10.0], parents, 2) == pytest.approx(11.0)


@pytest.mark.parametrize("recipe", ["montage", "epigenomics", "blast"])
def test_an_instance_is_seeded_topological_and_its_schedule_is_within_graham(recipe: str) -> None:
    a, b = generate(recipe, 100, 1), generate(recipe, 100, 1)
    assert a == b and 60 <= a.tasks <= 100
    assert generate(recipe, 100, 2).runtimes != a.runtimes
    assert all(p < i for i, ps in enumerate(a.parents) for p in ps)
    assert a.staged() and all(size >= 0 for size in a.staged().values())
    for workers in (1, 2, 8):
        lb = lower_bound(list(a.runtimes), a.parents, workers)
        ls = list_schedule(list(a.runtimes), a.parents, workers)
        assert lb * (1 - 1e-9) <= ls <= 2 * lb


@pytest.mark.parametrize(
    ("recipe", "size", "message"),
    [
        ("spiral", 100, "recipe 'spiral' is not one of"),
        ("montage", 10, "Cannot create synthetic graph with 10 nodes"),
        ("montage", 0, "size must be"),
    ],
)
def test_what_a_recipe_cannot_make_is_said(recipe: str, size: int, message: str) -> None:
    with pytest.raises(PerflabError, match=message):
        generate(recipe, size, 1)
