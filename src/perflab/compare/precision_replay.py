"""Replays of planned and sequential comparisons on synthetic noise with known parts (pure).

A run of window n gives exp(μ + β + ω) with β ~ N(0, σ_b²) and ω ~ N(0, σ_w²/n), and costs
S + c·n seconds (± a few per cent). Used by the tests and ``bench/precision_replay.py``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from perflab.compare import parts as measured_parts
from perflab.compare import pilot
from perflab.compare.precision import (
    OVERRUN,
    Parts,
    Plan,
    expect,
    most_pairs,
    plan,
    planned_level,
    precision_looks,
    run_planned,
)
from perflab.compare.stats import decide, sequential

#: Relative sd of a run's cost around S + c·n in the replays.
COST_NOISE = 0.05


class Machine:
    """Synthetic runs: draws values and counts the wall time they cost."""

    def __init__(self, parts: Parts, seed: int) -> None:
        self.parts = parts
        self.rng = np.random.default_rng(seed)
        self.wall_s = 0.0
        self.runs = 0

    def run(self, n: int, factor: float = 1.0) -> float:
        p = self.parts
        sd = math.sqrt(p.var_between + p.var_within / n)
        self.wall_s += p.run_s(n) * max(0.1, 1 + COST_NOISE * self.rng.standard_normal())
        self.runs += 1
        return factor * math.exp(sd * self.rng.standard_normal())

    def side(self, n: int, factor: float = 1.0) -> Callable[[], float]:
        return lambda: self.run(n, factor)

    def splits(self, n: int, m: int) -> measured_parts.RunParts:
        """One calibration run: a window of n tasks in m sub-batches."""
        p = self.parts
        beta = math.sqrt(p.var_between) * self.rng.standard_normal()
        sub = self.rng.standard_normal(m) * math.sqrt(p.var_within * m / n)
        window = p.task_s * n
        return measured_parts.RunParts(
            [math.exp(beta + s) for s in sub], n / m, p.fixed_s, window, n
        )


@dataclass
class Outcome:
    planned: Plan
    half_width: float
    wall_s: float
    pairs: int
    verdict: str
    stopped: str


def planned(
    truth: Parts,
    target: float,
    alpha: float,
    seed: int,
    factor: float = 1.0,
    calibration_runs: int = 10,
    splits: int = 8,
    threshold: float = 0.05,
    overrun: float = OVERRUN,
) -> Outcome:
    """Measure the parts (``calibration_runs`` runs of ``splits`` sub-batches), plan for
    ±``target``, then run the planned comparison with B ×``factor``."""
    m = Machine(truth, seed)
    window = 2000
    runs = [m.splits(window, splits) for _ in range(calibration_runs)]
    est = measured_parts.estimate(runs, boot=0)
    pl = plan(est.parts, target, planned_level(alpha))
    levels = precision_looks(4, pl.pairs, most_pairs(pl.pairs, overrun), alpha)
    m.wall_s, m.runs = 0.0, 0
    r = run_planned(
        m.side(pl.tasks),
        m.side(pl.tasks, factor),
        target,
        levels,
        planned_level(alpha),
        threshold,
        precision_from=max(2, pl.pairs // 2),
    )
    return Outcome(pl, r.half_width, m.wall_s, len(r.a), r.decision.verdict, r.stopped)


def pilot_planned(
    truth: Parts,
    target: float,
    alpha: float,
    seed: int,
    pairs: int = 8,
    windows: tuple[int, ...] = (500, 8000),
    threshold: float = 0.05,
) -> Outcome:
    """Fit the parts from ``pairs`` A/A pilot pairs at each of ``windows``
    (``compare.pilot``), plan for ±``target`` within the pilots' trusted windows, then run
    the planned A/A comparison: what ``perflab precision --windows`` and
    ``compare --precision`` do."""
    m = Machine(truth, seed)
    runs = []
    for _ in range(pairs):
        for n in windows:
            for _ in range(2):
                before = m.wall_s
                runs.append(pilot.PilotRun(n, m.run(n), m.wall_s - before))
    fit = pilot.estimate(runs, seed=seed, boot=100)
    pl = plan(fit.parts, target, planned_level(alpha), pilot.trusted(fit.windows))
    levels = precision_looks(4, pl.pairs, most_pairs(pl.pairs), alpha)
    pl = expect(pl, fit.parts, list(levels), max(2, pl.pairs // 2), seed=seed)
    m.wall_s, m.runs = 0.0, 0
    r = run_planned(m.side(pl.tasks), m.side(pl.tasks), target, levels, planned_level(alpha),
                    threshold, precision_from=max(2, pl.pairs // 2))  # fmt: skip
    return Outcome(pl, r.half_width, m.wall_s, len(r.a), r.decision.verdict, r.stopped)


def gate_replay(
    truth: Parts, n: int, n_max: int, factor: float, alpha: float, seed: int, early: bool
) -> tuple[str, int]:
    """The compare gate's own sequence (``stats.sequential``) on synthetic runs of window n:
    its verdict and the pairs it took."""
    m = Machine(truth, seed)
    dec, a, _ = sequential(m.side(n), m.side(n, factor), 4, n_max, 0.05, alpha, early_stop=early)
    return dec.verdict, len(a)


def fixed_power(truth: Parts, n: int, k: int, factor: float, alpha: float, sims: int) -> float:
    """Share of fixed-k comparisons (one look at alpha) that say "slower"."""
    hits = 0
    for seed in range(sims):
        m = Machine(truth, 10_000 + seed)
        xs, ys = [], []
        for _ in range(k):
            xs.append(m.run(n))
            ys.append(m.run(n, factor))
        hits += decide(xs, ys, 0.05, alpha, paired=True).verdict == "slower"
    return hits / sims
