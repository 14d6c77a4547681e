"""Does ``history --precision``'s early stop keep its error rate and its power? Replayed.

    PYTHONPATH=src python bench/history_early_stop.py [--target 0.05] [--sims 200]

Histories of three releases on a synthetic machine with known parts (S = 20 s, c = 0.5 ms a
task, σ_b = 3 %, σ_w = 1.5: the fixture of tests/cli/test_precision_verbs.py), planned as
``history --precision`` plans them and run with its looks (``history_seq.run_rounds``):
release 1 → 2 has no step, release 2 → 3 has ``--step`` (×1.0: A/A). Printed: the runs used
against the plan's, how often each step was said faster or slower (with a Wilson 95 %
interval), and the same for fixed-n, every planned run and the change-point gate's level
(alpha over the two steps), on fresh draws of the same truth.
"""

from __future__ import annotations

import argparse
import dataclasses
import math

import numpy as np

from perflab.analysis.stats import bonferroni_level, wilson_ci
from perflab.compare import precision as pp
from perflab.compare.history_seq import run_rounds, step_plan
from perflab.compare.stats import decide

PARTS = pp.Parts(fixed_s=20.0, task_s=0.0005, var_between=0.03**2, var_within=1.5**2)
ALPHA = 0.05


def rate(k: int, n: int) -> str:
    lo, hi = wilson_ci(k, n)
    return f"{k}/{n} ({lo:.1%}–{hi:.1%})"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--target", type=float, default=0.05, help="CI half-width per step")
    ap.add_argument("--sims", type=int, default=200, help="histories per truth")
    ap.add_argument("--step", type=float, default=1.1, help="ratio of release 3 to 2")
    a = ap.parse_args()
    pl = pp.plan(PARTS, a.target, ALPHA)
    pl = dataclasses.replace(pl, wall_s=pl.wall_s * 3 / 2, units=3)
    plan = step_plan(pl, 3, ALPHA, 3600)
    sd = math.sqrt(PARTS.var_run(pl.tasks))
    truth = [0.0, 0.0, math.log(a.step)]
    seq = [0, 0]
    fixed = [0, 0]
    runs = 0
    for seed in range(a.sims):
        rng = np.random.default_rng(seed)
        s: list[list[float]] = [[], [], []]

        def one(i: int, s: list[list[float]] = s, rng: np.random.Generator = rng) -> None:
            s[i].append(math.exp(truth[i] + sd * rng.normal()))

        steps = run_rounds(s, one, plan, "us_per_task", 0.05, seed)
        runs += sum(map(len, s))
        for j, st in enumerate(steps):
            seq[j] += bool(st.decision and st.decision.different)
        f = [[math.exp(truth[i] + sd * rng.normal()) for _ in range(pl.pairs)] for i in range(3)]
        level = bonferroni_level(ALPHA, 2)
        for j in range(2):
            fixed[j] += decide(f[j], f[j + 1], 0.05, level).different
    print(f"target ±{a.target:.0%}: {pl.pairs} runs per release of {pl.tasks:,} tasks planned "
          f"({3 * pl.pairs} in all, {3 * plan.most} at most); step 2 → 3 ×{a.step}")  # fmt: skip
    print(f"early stop: {runs / a.sims:.1f} runs per history on average; said different: "
          f"1 → 2 {rate(seq[0], a.sims)}, 2 → 3 {rate(seq[1], a.sims)}")  # fmt: skip
    print(f"fixed-n:    {3 * pl.pairs} runs per history; said different: "
          f"1 → 2 {rate(fixed[0], a.sims)}, 2 → 3 {rate(fixed[1], a.sims)}")  # fmt: skip


if __name__ == "__main__":
    main()
