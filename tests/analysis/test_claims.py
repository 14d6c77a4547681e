"""The multiple-testing adjustment every claim goes through (analysis/claims.py); its NaN
handling is tested in test_fast_paths.py."""

from __future__ import annotations

import gc

import numpy as np
import pytest
from statsmodels.stats.multitest import multipletests

from perflab.analysis.stats import holm


def test_holm_equals_statsmodels_on_random_ties_and_extremes() -> None:
    """Adjusted p-values to 1e-12 and every rejection the same as statsmodels' Holm, over
    2,000 draws: sizes 1-30, ties, zeros and ones, three levels."""
    rng = np.random.default_rng(0)
    gc.freeze()  # statsmodels' Holm runs gc.collect() each call: scan only what is new
    try:
        _compare(rng)
    finally:
        gc.unfreeze()


def _compare(rng: np.random.Generator) -> None:
    for i in range(2000):
        n = int(rng.integers(1, 31))
        p = rng.random(n) ** rng.uniform(0.2, 3)  # some families mostly small, some large
        if i % 3 == 0:  # ties
            p = np.round(p, 1)
        if i % 7 == 0:
            p[rng.integers(0, n)] = 0.0
            p[rng.integers(0, n)] = 1.0
        alpha = (0.01, 0.05, 0.05 / 3)[i % 3]
        want_reject, want_p, _, _ = multipletests(p, alpha=alpha, method="holm")
        got_p, got_reject = holm(p, alpha)
        assert got_p == pytest.approx(want_p, rel=1e-12, abs=1e-15), (i, p)
        assert (got_reject == want_reject).all(), (i, p, alpha)
