"""Properties of the bisection fed points that fail (issue 43), drawn by hypothesis: 2-12
points with a step at a random point (or none), each point broken or not (all, the good end,
one, at random, none), the simulated measurement's noise and seed. Whatever the draw: a
broken point is skipped and named, never an end of a comparison; an end that fails leaves
nothing bisected ("end failed"); every comparison's numbers are finite with the ratio inside
its interval; a culprit is a point that ran, or comes with the skipped candidates it hides in.

Examples: ``EXAMPLES`` (default profile; ``HYPOTHESIS_PROFILE=slow`` ten times more)."""

from __future__ import annotations

import math

from hypothesis import given
from hypothesis import strategies as st

from cliprops import examples
from perflab.bisect.search import bisect
from perflab.bisect.synthetic import simulated_measure

#: Examples per property (one simulated search: ~0.05 s).
EXAMPLES = 40


@st.composite
def searches(draw: st.DrawFn) -> tuple[list[float], set[int], float, int]:
    n = draw(st.integers(2, 12))
    step_at = draw(st.integers(1, n))  # n: no step
    costs = [1.0 if i < step_at else 1.5 for i in range(n)]
    pattern = draw(st.sampled_from(["all", "good", "bad", "one", "random", "none"]))
    broken = {
        "all": set(range(n)),
        "good": {0},
        "bad": {n - 1},
        "one": {n // 2},
        "none": set(),
    }.get(pattern)
    if broken is None:
        broken = {i for i in range(n) if draw(st.booleans())}
    return costs, broken, draw(st.sampled_from([0.0, 0.01, 0.05])), draw(st.integers(0, 99))


@given(drawn=searches())
@examples(EXAMPLES)
def test_a_failed_point_never_becomes_a_step(
    drawn: tuple[list[float], set[int], float, int],
) -> None:
    costs, broken, sigma, seed = drawn
    n = len(costs)
    measure = simulated_measure(costs, sigma=max(sigma, 1e-12), seed=seed, n_min=4, n_max=8,
                                broken=sorted(broken))  # fmt: skip
    s = bisect(n, measure, 0.05, max_culprits=2)
    assert set(s.skipped) <= broken
    assert (s.outcome == "end failed") == bool({0, n - 1} & broken)
    if s.outcome == "end failed":
        assert s.steps == [] and s.culprits == [] and s.confirm is None
    for st_ in s.steps:
        assert st_.a not in broken and st_.b not in broken
        assert all(math.isfinite(x) for x in (st_.ratio, st_.low, st_.high))
        assert st_.low <= st_.ratio * (1 + 1e-12) and st_.ratio <= st_.high * (1 + 1e-12)
    for c in s.culprits:
        assert c.index not in broken or c.index in c.candidates
        assert set(c.candidates) - {c.index} <= set(s.skipped)
        assert math.isfinite(c.share)
