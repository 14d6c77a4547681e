"""The robust paired estimator's stated error, checked on a synthetic truth with outliers:
pairs whose log ratio is the truth plus noise, a tenth of them hit by a slowed run (either
side alike, as a busy node's load does), over many seeds."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from perflab.compare.robust import hodges_lehmann, rank_bound, signed_rank_cdf

TRUE_RATIO = 1.08


def contaminated(rng: np.random.Generator, n: int, share: float = 0.1) -> tuple[list, list]:
    a = np.exp(rng.normal(0.0, 0.03, n))
    b = TRUE_RATIO * np.exp(rng.normal(0.0, 0.03, n))
    hit = rng.random(n) < share
    slow = np.exp(rng.uniform(0.3, 1.0, n))  # a run 35–170 % slower
    on_a = rng.random(n) < 0.5
    a = np.where(hit & on_a, a * slow, a)
    b = np.where(hit & ~on_a, b * slow, b)
    return list(a), list(b)


def test_signed_rank_distribution_matches_scipy() -> None:
    n = 9
    cdf = signed_rank_cdf(n)
    assert math.isclose(cdf[-1], 1.0)
    # scipy's exact one-sided p-value of W ≤ 5 (a sample whose positive ranks sum to 5)
    d = np.array([-9, -8, -7, -6, -5, -4, 3, 2, -1], float)
    p = stats.wilcoxon(d, alternative="less", method="exact").pvalue
    assert math.isclose(cdf[5], p, rel_tol=1e-9)


@pytest.mark.parametrize("n", [8, 20, 80])
def test_the_interval_covers_the_truth_as_stated_with_outliers(n: int) -> None:
    rng = np.random.default_rng(n)
    seeds, hits, widths_hl, widths_t = 400, 0, [], []
    conf = rank_bound(n, 0.05)[1]
    for _ in range(seeds):
        a, b = contaminated(rng, n)
        r = hodges_lehmann(a, b, 0.05)
        assert r is not None
        hits += r.low <= TRUE_RATIO <= r.high
        widths_hl.append(math.log(r.high / r.low))
        d = np.log(b) - np.log(a)
        widths_t.append(2 * stats.t.ppf(0.975, n - 1) * d.std(ddof=1) / math.sqrt(n))
    se = math.sqrt(conf * (1 - conf) / seeds)
    assert conf - 4 * se <= hits / seeds <= min(1.0, conf + 4 * se)
    if n >= 20:  # what it is for: outliers widen the t interval far more than this one
        assert np.median(widths_hl) < 0.75 * np.median(widths_t)


def test_the_estimate_is_near_the_truth_despite_outliers() -> None:
    rng = np.random.default_rng(7)
    errs = []
    for _ in range(200):
        a, b = contaminated(rng, 30)
        r = hodges_lehmann(a, b)
        assert r is not None
        errs.append(math.log(r.ratio / TRUE_RATIO))
    assert abs(float(np.mean(errs))) < 0.005


def test_too_few_pairs() -> None:
    assert hodges_lehmann([1.0], [1.0]) is None
    assert hodges_lehmann([1.0, 0.0], [1.0, 1.0]) is None
    r = hodges_lehmann([1.0, 1.0, 1.0], [1.1, 1.2, 1.1])
    assert r is not None and r.high == math.inf  # 3 pairs give no 95 % interval
