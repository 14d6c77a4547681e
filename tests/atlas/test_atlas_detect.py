"""The atlas's pure parts: detection finds planted steps in both directions, raises none in
a flat history over most seeds and never from one point; windows stay inside their segments;
a speed-up that undoes a regression is linked to it."""

from __future__ import annotations

import numpy as np
import pytest

from perflab.atlas import detect
from perflab.atlas.steps import fixes, window


def series(costs: list[float], seed: int, sigma: float = 0.02, runs: int = 4) -> list[list[float]]:
    rng = np.random.default_rng(seed)
    return [[c * float(np.exp(rng.normal(0, sigma))) for _ in range(runs)] for c in costs]


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_planted_steps_are_found_in_both_directions(seed: int) -> None:
    costs = [1.0] * 15 + [1.3] * 4 + [1.0] * 21 + [1.25] * 20
    found = detect.steps(series(costs, seed))
    assert [(f.index, f.direction) for f in found] == [(15, "slower"), (19, "faster"),
                                                       (40, "slower")]  # fmt: skip
    assert found[0].low <= 1.3 <= found[0].high


def test_a_flat_history_raises_no_step_in_most_seeds() -> None:
    raised = sum(bool(detect.steps(series([1.0] * 60, seed))) for seed in range(20))
    assert raised <= 2  # alpha 0.05: the bench measures the rate over 200+ histories


def test_one_slow_point_is_never_a_step() -> None:
    costs = [1.0] * 30 + [1.5] + [1.0] * 29
    assert detect.steps(series(costs, 3)) == []


def test_a_window_stays_inside_its_segments() -> None:
    f = detect.Found(index=15, lo=0, hi=19, ratio=1.3, low=1.2, high=1.4, p=0.0, level=0.01,
                     direction="slower")  # fmt: skip
    assert window(f) == (13, 16)
    g = detect.Found(index=19, lo=15, hi=40, ratio=0.77, low=0.7, high=0.8, p=0.0,
                     level=0.01, direction="faster")  # fmt: skip
    assert window(g) == (17, 20)
    assert window(detect.Found(16, 15, 17, 1.3, 1.2, 1.4, 0.0, 0.01, "slower")) == (15, 16)


def test_a_speed_up_that_undoes_a_regression_is_its_fix_and_others_are_not() -> None:
    def step(i: int, d: str, a: int, r: float, bench: str = "b") -> dict:
        return {
            "id": i,
            "bench": bench,
            "direction": d,
            "a_ord": a,
            "b_ord": a + 2,
            "confirm": {"ratio": r},
        }

    rows = [step(1, "slower", 14, 1.3), step(2, "faster", 18, 1 / 1.3), step(3, "slower", 39, 1.25)]
    assert fixes(rows) == [(2, 1)]
    # a speed-up of another benchmark, or far smaller than the regression, fixes nothing
    assert fixes([step(1, "slower", 14, 1.3), step(2, "faster", 18, 1 / 1.3, "c")]) == []
    assert fixes([step(1, "slower", 14, 1.3), step(2, "faster", 18, 0.98)]) == []
