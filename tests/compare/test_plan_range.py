"""The plan's range (compare.plan_range) and pooling a comparison into the parts
(compare.refine), on synthetic truths with known variance: over many seeds the range
predicted from a pilot's parts covers the pairs the truth needs at the planned window."""

from __future__ import annotations

import math

import numpy as np
import pytest

from perflab.analysis.stats import wilson_ci
from perflab.compare import parts as mp
from perflab.compare import pilot, refine
from perflab.compare import plan_range as pr
from perflab.compare import precision as pp
from perflab.errors import PerflabError

LOAD = pp.Parts(20.0, 2.6e-3, 0.036**2, 6.5**2)  # HTEX under load (docs/precision.md)
SHORT = pp.Parts(5.0, 1e-3, 0.1**2, 1.0)  # a short best window
LEVEL = pp.planned_level(0.05)


def pilots(truth: pp.Parts, pairs: int, rng: np.random.Generator) -> list[pilot.PilotRun]:
    """A/A pairs at 500 and 8,000 tasks: log-normal values of the truth's variance, wall
    times with 5 % noise."""
    out = []
    for n in (500, 8000):
        sd = math.sqrt(truth.var_run(n))
        for _ in range(2 * pairs):
            wall = truth.run_s(n) * (1 + 0.05 * rng.standard_normal())
            out.append(pilot.PilotRun(n, math.exp(sd * rng.standard_normal()), wall))
    return out


def measured(truth: pp.Parts, pairs: int, seed: int) -> mp.Measured:
    rng = np.random.default_rng(seed)
    return mp.from_pilot(pilot.estimate(pilots(truth, pairs, rng), seed, boot=100), 4 * pairs)


def planned(m: mp.Measured, target: float = 0.1) -> pp.Plan:
    pl = pp.plan(m.parts, target, LEVEL, m.bounds())
    return pr.ranged(pl, pr.ends(m, 1.0, pl.tasks))


def comparison(truth: pp.Parts, n: int, k: int, rng: np.random.Generator) -> refine.Observation:
    sd = math.sqrt(truth.var_run(n))
    a, b = (list(np.exp(sd * rng.standard_normal(k))) for _ in range(2))
    walls = list(truth.run_s(n) * (1 + 0.05 * rng.standard_normal(2 * k)))
    return refine.from_comparison(a, b, walls, n)


@pytest.mark.parametrize(("truth", "pairs"), [(LOAD, 4), (SHORT, 8)], ids=["load-4", "short-8"])
def test_the_range_covers_the_pairs_the_truth_needs(truth: pp.Parts, pairs: int) -> None:
    # fixed seeds; bench/precision_range.py: 94-96 % at 200 seeds for 4- and 8-pair pilots
    # of three truths; the joint ends of a 4-pair pilot's bootstrap intervals 81-86 %
    sims, hits, pooled_hits, spans = 60, 0, 0, []
    for seed in range(sims):
        m = measured(truth, pairs, seed)
        pl = planned(m)
        assert pl.pairs_range is not None and pl.wall_range_s is not None
        lo, hi = pl.pairs_range
        spans.append(hi / lo)
        assert lo <= pl.pairs <= hi and pl.wall_range_s[0] <= pl.wall <= pl.wall_range_s[1]
        hits += lo <= pr.needed(truth, pl) <= hi
        rng = np.random.default_rng(10_000 + seed)
        m2 = refine.pool(m, comparison(truth, pl.tasks, pl.pairs, rng), seed)
        pl2 = planned(m2)
        assert pl2.pairs_range is not None
        pooled_hits += pl2.pairs_range[0] <= pr.needed(truth, pl2) <= pl2.pairs_range[1]
    for got in (hits, pooled_hits):
        assert wilson_ci(got, sims)[1] >= 0.95, f"{got}/{sims} covered"
    assert np.median(spans) < 6  # a range so wide it always covers would say nothing


def test_pooling_moves_the_parts_toward_the_truth_and_narrows_them() -> None:
    m = measured(LOAD, 4, 3)
    rng = np.random.default_rng(1)
    n = 4000
    for _ in range(6):  # six comparisons of 10 pairs at one window
        m = refine.pool(m, comparison(LOAD, n, 10, rng))
    (at_n,) = [o for o in m.observations if o["tasks"] == n]
    assert at_n["df"] == 6 * 9 and at_n["runs"] == 6 * 20
    lo, hi = pr.window_var_ci(m, n)
    assert lo <= LOAD.var_run(n) <= hi
    assert m.parts.fixed_s == pytest.approx(LOAD.fixed_s, rel=0.1)
    assert m.windows == (500, 4000, 8000) and m.runs == 16 + 120


def test_an_observation_of_a_comparison_is_its_pairs_variance() -> None:
    a = [1.0, 2.0, 4.0]
    b = [2.0, 2.0, 16.0]  # log ratios: log 2, 0, log 4
    obs = refine.from_comparison(a, b, [10.0, 12.0, math.nan, 11.0], 100)
    d = np.log([2.0, 1.0, 4.0])
    assert obs.var == pytest.approx(np.var(d, ddof=1) / 2) and obs.df == 2
    assert obs.wall_s == pytest.approx(11.0) and obs.runs == 3
    with pytest.raises(PerflabError, match="2"):
        refine.from_comparison([1.0], [1.0], [], 100)


def test_merging_at_one_window_adds_the_sums_of_squares() -> None:
    one = refine.Observation(500, 0.02, 4, 10.0, 1.0, 8)
    two = refine.Observation(500, 0.05, 6, 12.0, 1.0, 12)
    (got,) = refine.merge([one], two)
    assert got.var == pytest.approx((0.02 * 4 + 0.05 * 6) / 10) and got.df == 10
    assert got.wall_s == pytest.approx((10 * 8 + 12 * 12) / 20) and got.runs == 20
    assert [o.tasks for o in refine.merge([one], refine.Observation(900, 0.01, 3, 1, 0, 4))] == [
        500,
        900,
    ]


def test_parts_from_sub_batches_cannot_pool() -> None:
    m = mp.Measured(LOAD, 8, 8, 250.0, (1, 2), (0, 1), (0, 1), (0, 1))
    with pytest.raises(PerflabError, match="sub-batches"):
        refine.observations_of(m)


def test_parts_stored_before_their_points_pool_from_the_fit() -> None:
    m = measured(LOAD, 8, 5)
    old = mp.Measured.from_dict({**m.to_dict(), "observations": []})
    points = refine.observations_of(old)
    assert [p.tasks for p in points] == [500, 8000] and all(p.df == 8 for p in points)
    assert points[0].var == pytest.approx(m.parts.var_run(500))
    pl = planned(old)  # no points: the joint ends of the stored intervals
    assert pl.pairs_range is not None and pl.pairs_range[0] <= pl.pairs <= pl.pairs_range[1]


def test_the_plan_line_says_the_range_as_a_prediction() -> None:
    pl = pp.Plan(1350, 9, 200.0, 0.13, 0.15, 0.992, 1500.0, 210.0, 0.132)
    assert "runs (" not in pl.line()
    pl = pr.ranged(pl, (pp.Parts(6, 2e-3, 0.004, 0), pp.Parts(9, 3e-3, 0.02, 0)))
    assert pl.line().startswith("9 + 9 runs (predicted ")
    assert "from the parts' 95% intervals) of 1,350 tasks, ~4 min (" in pl.line()
    d = pl.to_dict()
    assert d["pairs_range"][0] <= 9 <= d["pairs_range"][1] and len(d["wall_range_s"]) == 2
    assert pp.span(30, 300) == "30 s–5 min" and pp.span(120, 300) == "2–5 min"
    assert pp.span(230, 250) == "4 min"
