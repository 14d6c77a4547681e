"""Issue 44: the looks spend the reduction's level as ``t ** RHO`` of the runs made (the last
look, where small members are decided, gets most of it), and a look drops members by the
linear share's interval, which never changes what it calls needed."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from perflab.tune.knockout import look
from perflab.tune.spending import (
    ALPHA,
    LOOKS,
    MIN_SHARE,
    PAIR_SHARE,
    RHO,
    SPLIT_SHARE,
    drop_level,
    spend,
)

CAP = (1 - SPLIT_SHARE - PAIR_SHARE) * ALPHA


@given(
    st.lists(st.floats(0.0, 1.5), min_size=1, max_size=LOOKS + 1),
    st.lists(st.booleans(), min_size=LOOKS + 1, max_size=LOOKS + 1),
)
@settings(max_examples=200, deadline=None)
def test_the_spending_function_never_spends_beyond_the_looks_level(
    shares: list[float], last: list[bool]
) -> None:
    """The reduction's call (tune/reduce.py): each look brings any share of the runs, is told
    the share made before it, any of them the last by the data: the ordinary looks' levels
    are never negative and add up to at most their cap, so with the split and pair shares
    every test of the reduction stays within ALPHA."""
    spent, done = 0.0, 0.0
    for k, share in enumerate(shares):
        end = last[k] or k >= LOOKS - 1
        level = spend(share, spent, k, end, done)
        assert level >= 0
        spent, done = spent + level, done + share
        if end:
            break
    assert spent <= CAP + 1e-12
    assert spent + (SPLIT_SHARE + PAIR_SHARE) * ALPHA <= ALPHA + 1e-12


def test_three_even_looks_leave_the_last_most_of_the_level() -> None:
    """Three looks of a third of the runs each: the first spends only its floor, the second
    (2/3) ** RHO less the first, the last the rest, more than half the looks' level where
    linear spending gave each a third."""
    first = spend(1 / 3, 0.0, 0, False, 0.0)
    second = spend(1 / 3, first, 1, False, 1 / 3)
    third = spend(1 / 3, first + second, 2, True, 2 / 3)
    assert abs(first - MIN_SHARE * CAP) < 1e-12
    assert abs(second - CAP * ((2 / 3) ** RHO - (1 / 3) ** RHO)) < 1e-12
    assert first < second < third and third > CAP / 2
    assert abs(first + second + third - CAP) < 1e-12


def test_the_drop_level_is_the_linear_share() -> None:
    assert abs(drop_level(1 / 3) - CAP / 3) < 1e-12
    assert drop_level(0.0) == MIN_SHARE * CAP and drop_level(2.0) == CAP


def _look(seed: int, drop_alpha: float | None) -> dict[str, tuple[str, float | None]]:
    """One look of 40 knock-out runs around {x, n} (x saves 20 %, n nothing, 4 % noise) at a
    "needed" level of 0.001: each member's verdict and its interval's confidence."""
    rng = np.random.default_rng(seed)

    def measure(design: np.ndarray) -> list[tuple[frozenset[str], float]]:
        sets = [
            frozenset(f for f, d in zip(("x", "n"), row, strict=True) if not d) for row in design
        ]
        ys = [1000 * (0.8 if "x" in s else 1.0) * float(np.exp(rng.normal(0, 0.04))) for s in sets]
        return list(zip(sets, ys, strict=True))

    seen: list[tuple[frozenset[str], float]] = []
    ev = look(
        {"x", "n"}, [["x"], ["n"]], [], seen, measure, 40, 0, frozenset(),
        np.random.default_rng(seed + 100), 0.001, None, drop_alpha=drop_alpha,
    )  # fmt: skip
    return {e.factors[0]: (e.verdict, e.confidence) for e in ev}


def test_the_drop_level_drops_a_null_and_never_changes_what_is_needed() -> None:
    """On 30 seeds, the same runs looked at once with drops at the "needed" level (0.001) and
    once at a drop level of 0.01: x is called slower in the same seeds either way, and the
    null n is shown not slower (dropped) in more seeds with the drop level, its interval then
    at that level's confidence."""
    dropped = {None: 0, 0.01: 0}
    for seed in range(30):
        tight, loose = _look(seed, None), _look(seed, 0.01)
        assert (tight["x"][0] == "slower") == (loose["x"][0] == "slower")
        for level, got in ((None, tight), (0.01, loose)):
            if got["n"][0] in ("not slower", "faster"):
                dropped[level] += 1
                assert abs(got["n"][1] - (1 - 2 * (level or 0.001))) < 1e-12
    assert dropped[0.01] > dropped[None], dropped
