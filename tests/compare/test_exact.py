"""Issue 43 in compare: a deterministic metric (every pair, or every run, equal) is decided
on its measured ratio with no test: a t statistic of 0/0 gave "p = 1" or p 0."""

from __future__ import annotations

import pytest

from perflab.compare.stats import decide


@pytest.mark.parametrize("paired", [True, False])
def test_exact_samples_are_decided_on_the_ratio_without_a_p(paired: bool) -> None:
    same = decide([100.0] * 4, [100.0] * 4, paired=paired)
    assert same.verdict == "no difference" and same.p_value is None
    assert same.ci_low == same.ratio == same.ci_high == 1.0
    faster = decide([100.0] * 4, [90.0] * 4, paired=paired)
    assert faster.verdict == "faster" and faster.p_value is None
    assert faster.ci_low == faster.ratio == faster.ci_high == pytest.approx(0.9)
    small = decide([100.0] * 4, [99.0] * 4, paired=paired)  # within the 5% threshold
    assert small.verdict == "no difference" and small.p_value is None
    assert decide([100.0] * 4, [120.0] * 4, paired=paired).verdict == "slower"


def test_pairs_that_differ_by_the_same_ratio_are_exact() -> None:
    d = decide([100.0, 200.0, 150.0], [110.0, 220.0, 165.0], paired=True)
    assert d.p_value is None and d.verdict == "slower" and d.ratio == pytest.approx(1.1)
