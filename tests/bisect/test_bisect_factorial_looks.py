"""The hunk factorial's looks (``factorial.sequential``): the replicates stop once every
group's effect is decided or negligible, with the error spent over the looks. Simulated runs
(log-normal noise, sd 0.02 of a run's log, as bench/hunk_factorial.py), many seeds."""

from __future__ import annotations

import math

import numpy as np
import pytest

from perflab.bisect import factorial as fx

SD = 0.02
ALPHA = 0.05
SEEDS = 200
WHOLE = math.log(1.2)


def _run(k: int, costs: list[float], seed: int, reps: int = 10, early: bool = True) -> dict:
    """The looks over ``k`` groups whose log costs (when applied, not reverted) are
    ``costs``."""
    d = fx.design(k)
    assert d is not None
    rng = np.random.default_rng(seed)

    def block(r: int) -> list[fx.Row]:
        rows: list[fx.Row] = []
        for cell in d:
            c = [int(x) for x in cell]
            log = sum(cost for cost, reverted in zip(costs, c, strict=True) if not reverted)
            rows.append((r, c, math.exp(log + rng.normal(0, SD))))
        return rows

    return fx.sequential(block, k, WHOLE, ALPHA, 0.05, reps, early)


def _claims(got: dict) -> list[tuple[str, dict]]:
    """Every interval the result states: each group's share, each interaction."""
    est = got["fit"]
    return [("share", g["share"]) for g in est["groups"]] + [
        ("interaction", i["effect"]) for i in est["interactions"]
    ]


def test_the_looks_spend_alpha_and_fixed_looks_once() -> None:
    levels = fx.look_levels(10, ALPHA)
    assert min(levels) == fx.FIRST_LOOK and max(levels) == 10
    assert sum(levels.values()) == pytest.approx(ALPHA)
    assert fx.look_levels(10, ALPHA, early=False) == {10: ALPHA}
    assert fx.look_levels(2, ALPHA) == {2: ALPHA}  # fewer replicates than the first look


def test_states_read_each_share_interval() -> None:
    def est(*shares: tuple[float, float]) -> dict:
        return {"groups": [{"share": {"log": 0.0, "low": lo, "high": hi}} for lo, hi in shares]}

    band = math.log1p(0.05)
    got = fx.states(est((0.01, 0.2), (-0.3, -0.1), (-band / 2, band / 2), (-0.01, 0.2)), 0.05)
    assert got == ["decided", "decided", "negligible", "open"]
    assert fx.states({"groups": [{"share": None}]}, 0.05) == ["open"]


def test_a_a_states_a_false_effect_at_most_alpha_of_the_time() -> None:
    runs = [_run(2, [0.0, 0.0], seed) for seed in range(SEEDS)]
    false = [any(e["low"] > 0 or e["high"] < 0 for _, e in _claims(g)) for g in runs]
    assert np.mean(false) <= ALPHA
    # and the nulls are shown negligible before the most replicates, every seed
    assert all(g["stopped"] == "every group decided or negligible" for g in runs)
    assert np.mean([g["replicates"] for g in runs]) < 10


def test_a_planted_effect_stops_before_the_fixed_n_and_its_intervals_cover() -> None:
    truth = [WHOLE, 0.0, 0.0]  # group 0 is the whole step (+20 %), the others nothing
    runs = [_run(3, truth, seed) for seed in range(SEEDS // 2)]
    used = [g["replicates"] for g in runs]
    fixed = _run(3, truth, 0, early=False)
    assert fixed["replicates"] == 10 and len(fixed["looks"]) == 1
    assert np.mean(used) < fixed["replicates"]
    shares = [1.0, 0.0, 0.0]  # of the step; no interaction
    covered = []
    for g in runs:
        est = g["fit"]
        ok = all(e["low"] <= s * WHOLE <= e["high"] for e, s in
                 zip((x["share"] for x in est["groups"]), shares, strict=True))  # fmt: skip
        ok &= all(i["effect"]["low"] <= 0 <= i["effect"]["high"] for i in est["interactions"])
        covered.append(ok)
    assert np.mean(covered) >= 1 - ALPHA  # every stated interval covers its truth
    assert all(g["fit"]["groups"][0]["share"]["low"] > 0 for g in runs)  # found, every seed
