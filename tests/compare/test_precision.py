"""The precision planner, the parts' estimates and the planned sequence (all pure)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from perflab.analysis.stats import clopper_pearson
from perflab.compare import parts as mp
from perflab.compare.precision import (
    Parts,
    duration,
    half_width,
    pairs_needed,
    plan,
    planned_level,
    precision_looks,
    run_planned,
)
from perflab.compare.precision_replay import Machine, planned

HTEX = Parts(fixed_s=30.0, task_s=0.0005, var_between=0.03**2, var_within=1.5**2)


def brute(parts: Parts, target: float, level: float, lo: int, hi: int) -> float:
    """The least wall time over every window on a fine geometric grid."""
    best = math.inf
    for n in np.unique(np.geomspace(lo, hi, 150).round().astype(int)):
        k = pairs_needed(2 * parts.var_run(int(n)), math.log1p(target), level)
        best = min(best, 2 * k * parts.run_s(int(n)))
    return best


def test_n_star_is_the_continuous_optimum() -> None:
    assert HTEX.n_star() == pytest.approx(math.sqrt(1.5**2 * 30 / (0.03**2 * 0.0005)))
    assert Parts(30, 0.001, 0.0, 1.0).n_star() == math.inf
    assert Parts(30, 0.001, 0.01, 0.0).n_star() == 0.0


def test_plan_meets_its_target_and_says_so() -> None:
    p = plan(HTEX, 0.03, 0.008)
    assert p.half_width <= 0.03
    assert p.tasks == pytest.approx(HTEX.n_star(), rel=0.5)  # k is an integer
    assert p.wall_s == pytest.approx(2 * p.pairs * HTEX.run_s(p.tasks))
    assert p.line().startswith(f"{p.pairs} + {p.pairs} runs of {p.tasks:,} tasks, ~")
    assert "expected CI ±3.0%" in p.line()


@settings(max_examples=25, deadline=None)
@given(
    fixed=st.floats(0.5, 120),
    task_us=st.floats(10, 5000),
    sd_b=st.floats(0.0, 0.2),
    sd_w=st.floats(0.0, 5.0),
    target=st.floats(0.01, 0.2),
)
def test_plan_is_near_the_cheapest_window(
    fixed: float, task_us: float, sd_b: float, sd_w: float, target: float
) -> None:
    parts = Parts(fixed, task_us * 1e-6, sd_b**2, sd_w**2)
    p = plan(parts, target, 0.01, bounds=(100, 100_000))
    assert p.half_width <= target + 1e-9
    assert 100 <= p.tasks <= 100_000 and p.pairs >= 3
    assert p.wall_s <= 1.05 * brute(parts, target, 0.01, 100, 100_000)


def test_degenerate_parts() -> None:
    no_noise = plan(Parts(30, 0.001, 0.0, 0.0), 0.03, 0.01)
    assert (no_noise.pairs, no_noise.tasks, no_noise.half_width) == (3, 100, 0.0)
    between_only = plan(Parts(30, 0.001, 0.05**2, 0.0), 0.03, 0.01)
    assert between_only.tasks == 100  # a longer window buys nothing
    within_only = plan(Parts(30, 0.001, 0.0, 4.0), 0.03, 0.01)
    assert within_only.pairs <= 6 and within_only.tasks > 10_000  # few long runs
    free_start = plan(Parts(0.0, 0.001, 0.01, 4.0), 0.03, 0.01)
    assert free_start.tasks == 100
    with pytest.raises(ValueError):
        plan(HTEX, 0.0, 0.01)


def test_an_unreachable_target_names_its_time() -> None:
    p = plan(Parts(30, 0.0005, 0.4**2, 0.0), 0.001, 0.01)
    assert p.wall_s > 86400 * 30 and "days" in p.line()
    assert duration(math.inf) == "forever" and duration(420) == "7 min"


def test_pairs_needed_is_the_fewest() -> None:
    for var in (1e-4, 0.003, 0.05):
        k = pairs_needed(var, 0.03, 0.01)
        assert half_width(var, k, 0.01) <= 0.03
        assert k == 3 or half_width(var, k - 1, 0.01) > 0.03


def test_looks_spend_at_most_alpha() -> None:
    for k_plan, k_max in ((3, 3), (8, 12), (23, 36), (40, 40)):
        levels = precision_looks(4, k_plan, k_max, 0.01)
        assert sum(levels.values()) == pytest.approx(0.01)
        assert max(levels) == max(k_plan, k_max)
        if len(levels) > 1:
            assert levels[k_plan] == planned_level(0.01)


def _runs(truth: Parts, rng_seed: int, r: int = 12, m: int = 8, n: int = 2000) -> list:
    machine = Machine(truth, rng_seed)
    return [machine.splits(n, m) for _ in range(r)]


def test_estimates_recover_synthetic_truths() -> None:
    """Over many seeds the ANOVA's σ_w² is unbiased with ~95 % χ² coverage, σ_b² lands
    near the truth on average, and S and c are read back."""
    covered_w = covered_b = 0
    est_b, est_w = [], []
    seeds = 100
    for seed in range(seeds):
        m = mp.estimate(_runs(HTEX, seed), boot=300)
        est_b.append(m.parts.var_between)
        est_w.append(m.parts.var_within)
        covered_w += m.within_ci[0] <= HTEX.var_within <= m.within_ci[1]
        covered_b += m.between_ci[0] <= HTEX.var_between <= m.between_ci[1]
        assert m.parts.fixed_s == pytest.approx(30.0)
        assert m.parts.task_s == pytest.approx(0.0005)
    assert np.mean(est_w) == pytest.approx(HTEX.var_within, rel=0.05)
    assert np.mean(est_b) == pytest.approx(HTEX.var_between, rel=0.2)
    lo, hi = clopper_pearson(covered_w, seeds)
    assert lo <= 0.95 <= hi
    assert covered_b / seeds >= 0.75  # a bootstrap of 12 runs is short of nominal


def test_estimates_of_degenerate_noise() -> None:
    flat = mp.estimate(_runs(Parts(30, 0.0005, 0.0, 0.0), 1))
    assert flat.parts.var_between == 0 and flat.parts.var_within == 0
    no_between = mp.estimate(_runs(Parts(30, 0.0005, 0.0, 2.0), 2, r=30))
    assert no_between.parts.var_between < 0.2 * 2.0 / 2000
    with pytest.raises(Exception, match="at least"):
        mp.estimate(_runs(HTEX, 3, r=2))


def test_parts_from_a_record_and_the_store(tmp_path) -> None:  # type: ignore[no-untyped-def]
    rec = {
        "measurement": {
            "window_splits": [{"tasks": 500, "wall_s": 0.5}, {"tasks": 500, "wall_s": 0.25}],
            "phases": {"total": 31.0, "window": 0.75},
        }
    }
    rp = mp.from_record(rec, "us_per_task")
    assert rp is not None
    assert rp.values == [1000.0, 500.0] and rp.sub_tasks == 500
    assert rp.fixed_s == pytest.approx(30.25) and rp.tasks == 1000
    assert mp.from_record({"measurement": {}}, "us_per_task") is None
    with pytest.raises(Exception, match="cannot be split"):
        mp.from_record(rec, "cpu_us_per_task")
    sig = {"target": "parsl-htex", "tasks": 1000, "time_s": None, "metric": "us_per_task"}
    m = mp.estimate(_runs(HTEX, 4))
    mp.save(m, sig, tmp_path)
    back = mp.load({**sig, "tasks": 8000}, tmp_path)  # the window is not part of the key
    assert back is not None and back.parts == m.parts and back.within_ci == m.within_ci


def test_run_planned_stops_on_precision_and_on_a_clear_change() -> None:
    p = plan(HTEX, 0.03, planned_level(0.05))
    levels = precision_looks(4, p.pairs, 2 * p.pairs, 0.05)
    m = Machine(HTEX, 7)
    r = run_planned(m.side(p.tasks), m.side(p.tasks), 0.03, levels, planned_level(0.05))
    assert r.stopped in ("precision reached", "most runs")
    assert len(r.a) == len(r.b) >= 2
    big = run_planned(m.side(p.tasks), m.side(p.tasks, 1.5), 0.001, levels, planned_level(0.05))
    assert big.stopped == "decided" and big.decision.verdict == "slower"
    assert len(big.a) < max(levels)


def test_run_planned_out_of_time_looks_at_once() -> None:
    m = Machine(HTEX, 8)
    levels = precision_looks(4, 10, 20, 0.01)
    r = run_planned(
        m.side(2000), m.side(2000), 1e-6, levels, 0.008, out_of_time=lambda: m.runs >= 6
    )
    assert r.stopped == "time budget" and len(r.a) == 3
    assert r.decision.alpha == levels[4]


def test_aa_replays_keep_the_false_alarm_rate() -> None:
    """≥ 200 planned A/A comparisons (synthetic noise, parts measured first): "different"
    at most alpha."""
    sims, alpha = 200, 0.05
    outs = [planned(HTEX, 0.05, alpha, seed) for seed in range(sims)]
    false = sum(o.verdict in ("faster", "slower") for o in outs)
    assert false / sims <= alpha


def test_plans_are_calibrated() -> None:
    """Over ≥ 20 planned comparisons the reached half-width is within 20 % of the planned
    one and the wall time within 25 % of the planned (on average)."""
    outs = [planned(HTEX, 0.03, 0.05, 1000 + s) for s in range(24)]
    hw = np.mean([o.half_width / o.planned.half_width for o in outs])
    wall = np.mean([o.wall_s / o.planned.wall_s for o in outs])
    assert abs(hw - 1) <= 0.2, hw
    assert abs(wall - 1) <= 0.25, wall


def test_sequential_detects_a_planted_change_with_fewer_runs_than_fixed_n() -> None:
    """+10 % planted: the gate's sequential looks stop sooner on average than the fixed
    number of pairs that reaches the same power."""
    from perflab.compare.precision_replay import fixed_power, gate_replay

    sims = 100
    runs = [gate_replay(HTEX, 2000, 12, 1.10, 0.05, s, early=True) for s in range(sims)]
    power = sum(v == "slower" for v, _ in runs) / sims
    asn = float(np.mean([k for _, k in runs]))
    fixed = next(k for k in range(4, 40) if fixed_power(HTEX, 2000, k, 1.10, 0.05, sims) >= power)
    assert power >= 0.9 and asn < fixed
