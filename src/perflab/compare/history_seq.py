"""``history --precision``: rounds that stop early, step by step.

Each step between neighbouring releases is a planned comparison with the looks and stopping
rule of ``compare --precision`` (``precision.Looks``): it stops once its interval is within the
target or its verdict is faster/slower. A release is run in a round while a step beside it is
open, so a history whose steps are known early makes fewer runs than its plan. The history's
alpha is split over its steps (Bonferroni), and each step's share over its looks; a step
confirmed by its looks is a change point at that spent level.

A release's runs are not paired with its neighbour's (rounds go in random order, and a
release stops when both its steps have), so a step is Welch's test on the logs, and its
half-width the Welch t interval's.
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from perflab.analysis.stats import bonferroni_level, welch_ci
from perflab.compare import precision as pp
from perflab.compare.stats import HIGHER_IS_BETTER, Decision, decide, exact_samples

#: Runs per release before a step's first look (compare's ``--min-runs`` default).
FIRST_LOOK = 4


@dataclass
class Step:
    """The comparison between neighbouring releases ``before`` and ``after`` (indices)."""

    before: int
    after: int
    decision: Decision | None = None
    half_width: float = math.inf
    stopped: str | None = None  # None: still open
    runs: int = 0  # runs per release at its last look
    looks: list[dict[str, Any]] = field(default_factory=list)


@dataclass(frozen=True)
class StepPlan:
    """A history's planned steps: ``pairs`` runs per release planned, up to ``most`` if the
    parts were underestimated, each step at ``alpha`` (its Bonferroni share of the history's)
    spent over ``looks``; the interval judged at the plan's level."""

    looks: pp.Looks
    pairs: int
    most: int
    alpha: float


def step_plan(pl: pp.Plan, releases: int, alpha: float, max_time_s: float) -> StepPlan:
    """The looks of each step of a history of ``releases`` planned as ``pl``: up to the
    plan's overrun (``most_pairs``) while the time budget allows it."""
    run_s = pl.wall_s / max(1, pl.units * pl.pairs)
    most = max(pl.pairs, min(pp.most_pairs(pl.pairs), int(max_time_s // (releases * run_s))))
    step_alpha = bonferroni_level(alpha, releases - 1)
    levels = pp.precision_looks(FIRST_LOOK, pl.pairs, most, step_alpha)
    level = 1 - pl.confidence
    looks = pp.Looks(levels, pl.target, level, max(2, pl.pairs // 2), until_decided=True)
    return StepPlan(looks, pl.pairs, most, step_alpha)


def welch_half_width(a: list[float], b: list[float], level: float) -> float:
    """The relative half-width of the Welch t interval of log B − log A at ``level`` (0 on
    exact data: both sides constant)."""
    la, lb = np.log(np.asarray(a, float)), np.log(np.asarray(b, float))
    if min(len(la), len(lb)) < 2:
        return math.inf
    if exact_samples(la, lb, paired=False):
        return 0.0
    lo, hi = welch_ci(lb, la, 1 - level)
    return math.expm1((hi - lo) / 2)


def run_rounds(
    samples: list[list[float]],
    measure_one: Callable[[int], None],
    plan: StepPlan,
    metric: str,
    threshold: float,
    seed: int = 0,
    out_of_time: Callable[[], bool] = lambda: False,
    skip: Callable[[int], bool] = lambda i: False,
) -> list[Step]:
    """Rounds over the releases (``measure_one(i)`` adds to ``samples[i]``) in random order,
    each release while a step beside it is open; after each round every open step due a
    look is decided (``plan.looks``) and may stop. ``skip(i)``: a release not to run again
    (refused). Returns the steps, each with why it stopped."""
    steps = [Step(i, i + 1) for i in range(len(samples) - 1)]
    rng = random.Random(seed)
    rule = plan.looks
    for n in range(1, rule.last + 1):
        open_ = {i for s in steps if s.stopped is None for i in (s.before, s.after)}
        if not open_:
            break
        for i in rng.sample(sorted(open_), len(open_)):
            if not skip(i):
                measure_one(i)
        late = n >= 2 and out_of_time()
        for s in steps:
            if s.stopped is None:
                _look(s, samples, n, late, rule, metric, threshold)
    return steps


def _look(
    s: Step, samples: list[list[float]], n: int, late: bool, rule: pp.Looks, metric: str,
    threshold: float,
) -> None:  # fmt: skip
    level = rule.due(n, late)
    if level is None:
        return
    a, b = samples[s.before], samples[s.after]
    s.runs = n
    if min(len(a), len(b)) < 2:  # failed runs: no test yet; at the end, none at all
        if late or n >= rule.last:
            s.stopped = "too few values"
        return
    dec = decide(a, b, threshold, level, metric in HIGHER_IS_BETTER)
    hw = welch_half_width(a, b, rule.precision_level)
    s.decision, s.half_width = dec, hw
    s.looks.append({"n": n, "ratio": dec.ratio, "verdict": dec.verdict, "half_width": hw,
                    "level": level})  # fmt: skip
    s.stopped = rule.stop(dec, hw, n, late)


def deadline(max_time_s: float, round_s: float) -> Callable[[], bool]:
    """Whether another round (``round_s`` seconds) would run past ``max_time_s`` from now."""
    t0 = time.monotonic()
    return lambda: time.monotonic() - t0 + round_s > max_time_s


def summary(
    plan: StepPlan, steps: list[Step], labels: list[str], runs: int, alpha: float,
    wall_s: float,
) -> dict[str, Any]:  # fmt: skip
    """What the planned history reached (JSON-able), with the lines the CLI prints: runs used
    against planned, each step's stop, and the error spent on looking more than once."""
    planned = plan.pairs * len(labels)
    out_steps = [
        {"before": labels[s.before], "after": labels[s.after], "runs": s.runs,
         "stopped": s.stopped, "half_width": s.half_width if math.isfinite(s.half_width) else None,
         "decision": s.decision.to_dict() if s.decision else None, "looks": s.looks}
        for s in steps
    ]  # fmt: skip
    widest = max((s.half_width for s in steps), default=math.inf)
    rate = pp.per_hour(widest, wall_s)
    lines = [f"{runs} runs of {planned} planned ({plan.most * len(labels)} at most) in "
             f"{pp.duration(wall_s)}, target ±{pp.pct(plan.looks.target)} per step; widest "
             f"step ±{pp.pct(widest)}: {pp.per_hour_text(rate)}"]  # fmt: skip
    for s in steps:
        verdict = s.decision.verdict if s.decision else "no test"
        ratio = f"×{s.decision.ratio:.3f}, " if s.decision else ""
        lines.append(f"{labels[s.before]} → {labels[s.after]}: {s.stopped} after {s.runs} "
                     f"runs each ({ratio}CI ±{pp.pct(s.half_width)}, {verdict})")  # fmt: skip
    lines.append(f"each step's {plan.looks.spent(plan.alpha)}, its Bonferroni share of "
                 f"α = {alpha:.3g} over {len(steps)} steps: looking more than once keeps the "
                 "false-alarm rate at most α")  # fmt: skip
    return {"runs": runs, "planned_runs": planned, "most_runs": plan.most * len(labels),
            "target": plan.looks.target, "step_alpha": plan.alpha, "wall_s": wall_s,
            "half_width": widest if math.isfinite(widest) else None,
            "half_width_per_hour": rate,
            "levels": {str(k): v for k, v in plan.looks.levels.items()},
            "steps": out_steps, "lines": lines}  # fmt: skip
