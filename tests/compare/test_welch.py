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
