"""Precision per hour (analysis/reach.py) against synthetic truths of known variance: the
half-width reached is the one the variance implies, its intervals cover, and the runs it
predicts for a target reach it."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from perflab.analysis.reach import design_scale, design_x, reach, run_seconds
from perflab.analysis.sizing import half_width, pairs_needed, t_quantile

FACTORS = ["a", "b", "c"]
BETA = np.array([-0.2, 0.1, 0.0])  # log effects: ×0.82, ×1.11, none
SD = 0.08  # run-to-run sd of the log metric (an 8 % CV)


def campaign(reps: int, seed: int, sd: float = SD) -> tuple[np.ndarray, np.ndarray]:
    """A 2³ full factorial, each set ``reps`` times, log-normal noise of sd ``sd``."""
    rng = np.random.default_rng(seed)
    x = np.array(list(itertools.product([0, 1], repeat=3)) * reps, float)
    y = 1000 * np.exp(x @ BETA + sd * rng.standard_normal(len(x)))
    return y, x


def test_the_half_width_reached_is_the_one_the_variance_implies_and_covers() -> None:
    reps, seeds = 3, 300
    n = 8 * reps
    hws, covered = [], 0
    for seed in range(seeds):
        y, x = campaign(reps, seed)
        p = reach(y, x, FACTORS, run_s=60.0)
        for e, beta in zip(p["effects"], BETA, strict=True):
            hw = math.log1p(e["half_width"])
            hws.append(hw)
            covered += abs(_estimate(y, x, FACTORS.index(e["effect"])) - beta) <= hw
    # an effect of a 0/1 factor in a balanced 2³ design: var = 4 σ² / N, df = N − 8 sets
    expected = half_width(4 * SD**2, n, 0.05, df_lost=8)
    assert np.mean(hws) == pytest.approx(expected, rel=0.06)  # E[s] < σ by ~2 % at 16 df
    assert 0.93 <= covered / (3 * seeds) <= 0.97


def _estimate(y: np.ndarray, x: np.ndarray, j: int) -> float:
    f = np.hstack([np.ones((len(y), 1)), x])
    return float(np.linalg.lstsq(f, np.log(y), rcond=None)[0][j + 1])


def test_the_runs_predicted_for_a_target_reach_it() -> None:
    """From a pilot of 2 runs a set, the predicted campaign, run, reaches the target (the
    median over seeds within 15 %); the prediction's hours are its runs × the run time."""
    target, reached, ratios = 0.03, [], []
    for seed in range(200):
        y, x = campaign(2, seed)
        p = reach(y, x, FACTORS, run_s=30.0, target=target)
        worst = max(p["effects"], key=lambda e: e["half_width"])
        assert worst["more_hours_predicted"] == pytest.approx(worst["more_runs"] * 30 / 3600)
        reps = math.ceil(worst["runs_to_target"] / 8)
        y2, x2 = campaign(reps, 10_000 + seed)
        reached.append(max(e["half_width"] for e in reach(y2, x2, FACTORS, 30.0)["effects"]))
        ratios.append(worst["runs_to_target"])
    assert np.median(reached) == pytest.approx(target, rel=0.15)
    # the truth's own answer: runs whose t interval of var 4σ²/N is ±3 %
    truth = pairs_needed(4 * SD**2, math.log1p(target), 0.05, k_min=16, df_lost=8)
    assert np.median(ratios) == pytest.approx(truth, rel=0.2)


def test_a_reached_target_asks_for_no_more_runs_and_the_lines_say_predicted() -> None:
    y, x = campaign(40, 1, sd=0.02)
    p = reach(y, x, FACTORS, run_s=10.0, target=0.05)
    assert all(e["more_runs"] == 0 for e in p["effects"])
    assert "within the target" in p["lines"][3]
    y, x = campaign(2, 1)
    p = reach(y, x, FACTORS, run_s=10.0, target=0.01)
    assert p["effects"][0]["more_runs"] > 0
    assert "predicted" in p["lines"][3] and "more runs" in p["lines"][3]


def test_what_cannot_be_known_is_said() -> None:
    y, x = campaign(1, 0)
    assert "run twice" in reach(y, x, FACTORS, 1.0)["why_not"]
    assert "positive" in reach(-y, x, FACTORS, 1.0)["why_not"]
    assert "no run" in reach(y[:0], x[:0], FACTORS, 1.0)["lines"][0]
    # b always equals a: neither effect is estimable apart; c still is
    y, x = campaign(2, 0)
    x[:, 1] = x[:, 0]
    est = {e["effect"]: e["estimable"] for e in reach(y, x, FACTORS, None)["effects"]}
    assert est == {"a": False, "b": False, "c": True}


def test_without_factors_the_sets_means_are_the_effects() -> None:
    rng = np.random.default_rng(3)
    y = np.exp(0.1 * rng.standard_normal(10))
    p = reach(y, np.zeros((10, 0)), [], run_s=None)
    (e,) = p["effects"]
    assert e["effect"] == "base" and p["sets"][0]["runs"] == 10
    assert e["half_width"] == pytest.approx(p["sets"][0]["half_width"])
    assert e["more_hours_predicted"] is None


def test_run_seconds_is_the_median_gap_between_starts() -> None:
    t = np.array([0, 10, 20, 30, 10_000, 10_010.0])  # a pause does not count
    assert run_seconds(t) == 10.0
    assert run_seconds(np.array([5.0])) is None


def test_a_sweeps_levels_are_against_its_first_level() -> None:
    """Levels of one factor split every set (a sweep): the first is the reference, each
    other level's effect is against it, with 2σ²/r like a pair's (design_scale 1)."""
    factors = ["w=1", "w=2", "w=4"]
    rng = np.random.default_rng(0)
    x = np.tile(np.eye(3), (5, 1))
    y = np.exp(x @ np.array([0.0, -0.1, -0.2]) + 0.05 * rng.standard_normal(15))
    p = reach(y, x, factors, 1.0)
    assert [e["reference"] for e in p["effects"]] == [True, False, False]
    assert p["effects"][0]["half_width"] is None
    # level 2 against level 1, 5 runs each: var 2σ²/5, with the 15 − 3 sets = 12 df
    hw = math.expm1(t_quantile(0.05, 12) * math.sqrt(2 * p["pooled_sd_log"] ** 2 / 5))
    assert p["effects"][1]["half_width"] == pytest.approx(hw)
    assert design_scale(np.eye(3), factors) == pytest.approx(1.0)
    # a 2³ full factorial: 4σ²/8 per replicate, a quarter of a pair's 2σ²
    full = np.array(list(itertools.product([0, 1], repeat=3)), float)
    assert design_scale(full, FACTORS) == pytest.approx(0.25)


def test_design_x_holds_any_number_of_sets_and_factors() -> None:
    assert design_x([["a"], []], ["a", "b"]).tolist() == [[1.0, 0.0], [0.0, 0.0]]
    assert design_x([[], []], []).shape == (2, 0) and design_x([], ["a"]).shape == (0, 1)
