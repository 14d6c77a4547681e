"""Issue 44, the multiplicative truth at 15 runs per candidate: a member needed only in the
set's own state (h beside s) is tested alone beside the kept set, and the looks' model takes
the product of two members whose effects multiply (a 1.35x a*b) that the search shows."""

from __future__ import annotations

import numpy as np
import pytest

from perflab.tune import reduce as reduction
from perflab.tune.interact import interacting
from perflab.tune.reduce import reduce, shown_needed
from perflab.tune.truths import TRUTHS

TR = TRUTHS["multiplicative"]


def _runs(sets: list[list[str]], rng: np.random.Generator) -> list[tuple[frozenset[str], float]]:
    return [(frozenset(s), float(y)) for s, y in zip(sets, TR.measure(sets, rng), strict=True)]


def test_the_search_runs_show_the_product_of_a_and_b() -> None:
    """Search-like runs over {a, b, c, d, n00, n01}: a's and b's product (1.35x) is found,
    first, in most seeds."""
    hits = 0
    for seed in range(8):
        rng = np.random.default_rng(seed)
        chosen = ["a", "b", "c", "d", "n00", "n01"]
        seen = _runs([sorted(f for f in chosen if rng.random() < 0.6) for _ in range(60)], rng)
        got = interacting(seen, chosen)
        hits += bool(got) and set(got[0]) == {"a", "b"}
    assert hits >= 7, hits


def _needs_h(seed: int) -> bool:
    """{a, b, c, h, s, L=2}: h costs 15 % but keeps the set above the time where s helps, so
    the set is 1.125x slower without h alone (and faster without h and anything else)."""
    chosen = ["a", "b", "c", "h", "s", "L=2"]
    rng = np.random.default_rng(seed)
    near = [sorted(set(chosen) - {f}) for f in chosen for _ in range(2)] + [chosen] * 4
    obs = _runs(near, rng)
    kept, ev = reduce(
        set(chosen),
        obs,
        TR.cons,
        lambda s, rng=rng: list(TR.measure([sorted(x) for x in s], rng)),
        60,
        np.random.default_rng(seed + 1),
    )
    return "h" in shown_needed(kept, ev, TR.cons)


def test_a_member_needed_only_in_the_sets_state_is_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    """With the alone test h is shown needed in most of 6 seeds; without it (its level 0)
    in no more (4 of 6 when written: the looks' average over every drop can hide it)."""
    with_it = sum(_needs_h(seed) for seed in range(6))
    alone = reduction.alone
    monkeypatch.setattr(reduction, "alone", lambda *a: alone(*a[:6], 0.0, *a[7:]))
    without = sum(_needs_h(seed) for seed in range(6))
    assert with_it >= 5 and without <= with_it, (with_it, without)
