"""The METG search on synthetic efficiency curves with a known crossing: it steps outwards,
bisects in log task size, and stops with a two-sided interval (or a bound, with its reason)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from perflab.analysis.metg import classify, efficiency_curve, metg, next_level
from perflab.zoo.adaptive import MAX_TASKS, metg_tasks


def _point(
    w: float, overhead: float, noise: float, rng: np.random.Generator, burst: float = 0.0
) -> dict:
    """One run of 2 cores with a fixed per-task overhead: efficiency = w / (w + o); with
    probability ``burst`` another user's load doubles the run's wall time."""
    n = 1000
    wall = n * (w + overhead) / 2 / 1e6 * (1 + noise * rng.standard_normal())
    wall *= 2.0 if rng.random() < burst else 1.0
    return {"task_us": w, "tasks": n, "wall_s": wall, "slots": 2, "efficiency": n * w / 2e6 / wall}


def _search(
    overhead: float, seed: int, noise: float = 0.05, reps: int = 3, burst: float = 0.0
) -> tuple[dict, int]:
    rng = np.random.default_rng(seed)
    rows = [
        _point(w, overhead, noise, rng, burst)
        for w in (10000.0, 1000.0, 100.0)
        for _ in range(reps)
    ]
    for rounds in range(1, 30):
        level, why = next_level(efficiency_curve(pd.DataFrame(rows)))
        if level is None:
            return metg(pd.DataFrame(rows), limit=why), rounds
        rows += [_point(level, overhead, noise, rng, burst) for _ in range(reps)]
    raise AssertionError("the search did not stop")


def test_the_search_brackets_the_crossing_on_many_curves() -> None:
    rng = np.random.default_rng(42)
    covered = 0
    seeds = 40
    for seed in range(seeds):
        overhead = float(np.exp(rng.uniform(np.log(20), np.log(3000))))
        m, rounds = _search(overhead, seed)
        truth = 2 * overhead  # efficiency 0.5 at w = o: granularity w + o
        assert m["status"] == "crossing" and rounds <= 10
        assert m["ci_low"] <= m["metg_us"] <= m["ci_high"]
        big, small = m["bracket_us"]  # levels between them straddle 0.5: in the interval
        inside = sorted(c["task_us"] for c in m["curve"] if small <= c["task_us"] <= big)
        assert max(b / a for a, b in zip(inside, inside[1:], strict=False)) <= 2.0 + 1e-9
        covered += m["ci_low"] <= truth <= m["ci_high"]
    assert covered >= 0.85 * seeds


def test_disturbed_runs_get_more_replicates_not_a_wrong_direction() -> None:
    crossed = 0
    for seed in range(30):
        m, rounds = _search(overhead=300.0, seed=seed, burst=0.15)
        crossed += m["status"] == "crossing"
        assert max(c["task_us"] for c in m["curve"]) <= 10000.0  # never went up
    assert crossed >= 27


def test_a_search_that_reaches_the_kernel_floor_is_a_bound_with_its_reason() -> None:
    m, _ = _search(overhead=0.5, seed=1)  # still efficient at the smallest task
    assert m["status"] == "upper" and "floor" in m["limit"]
    m, _ = _search(overhead=1e7, seed=1)  # never efficient up to the ceiling
    assert m["status"] == "lower" and "ceiling" in m["limit"]


def test_failed_runs_stop_the_search_downwards() -> None:
    rng = np.random.default_rng(0)
    rows = [_point(w, 1.0, 0.01, rng) for w in (1000.0, 100.0) for _ in range(3)]
    level, why = next_level(efficiency_curve(pd.DataFrame(rows)), failed_us=(10.0,))
    assert level is None and "engine's limit" in why


def test_a_level_whose_interval_contains_the_threshold_is_not_a_side() -> None:
    curve = pd.DataFrame(
        {"task_us": [100.0, 50.0, 10.0], "efficiency": [0.9, 0.5, 0.1],
         "ci_low": [0.8, 0.4, 0.05], "ci_high": [0.95, 0.6, 0.2]}
    )  # fmt: skip
    b = classify(curve, 0.5)
    assert b.sides == ["above", "straddles", "below"] and (b.above, b.below) == (0, 2)


@pytest.mark.parametrize(("task_us", "want"), [(10000.0, 100), (100.0, 10000), (1.0, MAX_TASKS)])
def test_each_point_has_enough_tasks_for_its_ideal_time(task_us: float, want: int) -> None:
    assert metg_tasks(task_us, slots=2, point_s=0.5, least=100) == want
