"""One Welch test: the gate's unpaired p is the analysis' ``welch_p``, with exact data said."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats as sps

from perflab.analysis import stats as astats
from perflab.compare import stats


def test_the_gate_and_the_analysis_share_one_welch_p() -> None:
    assert stats.welch_p is astats.welch_p
    rng = np.random.default_rng(3)
    for _ in range(50):
        la, lb = rng.standard_normal(6), rng.standard_normal(9) + 0.3
        want = sps.ttest_ind(lb, la, equal_var=False).pvalue
        assert stats.gate_welch_p(la, lb) == pytest.approx(want, rel=1e-12)


def test_exact_data_have_no_welch_test_and_each_caller_says_what_they_mean() -> None:
    same = np.full(4, 2.0)
    assert astats.welch_p(same, same) is None and astats.welch_p(same, same + 1) is None
    # the gate: exact data decide by their values (as its paired test's constant diffs do)
    assert stats.gate_welch_p(same, same) == 1.0
    assert stats.gate_welch_p(same, same + 1) == 0.0
    assert stats.decide(np.exp(same), np.exp(same)).verdict == "no difference"
    assert stats.decide(np.exp(same), np.exp(same + 1)).verdict == "slower"
    # one exact side is still a defined test (the other side's variance)
    p = astats.welch_p(same, np.array([2.5, 3.0, 3.5]))
    assert p is not None and 0 < p < 1


def test_a_geometric_mean_of_few_values_has_an_interval_that_holds_or_none() -> None:
    """One value: no interval (a zero-width one would be invented). Two: the t interval of
    the logs, which covers the true geometric mean in ~95 % of 4,000 lognormal samples
    (binomial sd 0.34 %). Identical values: the point itself, exactly."""
    assert stats.geo_mean_ci([500.0])[1:] == (None, None)
    assert "ci_low" not in stats.location([500.0])
    assert stats.geo_mean_ci([5.0, 5.0]) == pytest.approx((5.0, 5.0, 5.0), rel=1e-12)
    rng = np.random.default_rng(7)
    hits = 0
    for _ in range(4000):
        gm, lo, hi = stats.geo_mean_ci(list(np.exp(rng.normal(np.log(100.0), 0.2, size=2))))
        assert lo is not None and hi is not None and lo < gm < hi
        hits += lo <= 100.0 <= hi
    assert 0.935 <= hits / 4000 <= 0.965, hits
