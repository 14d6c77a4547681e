"""How often does the atlas raise a step in a history with none? ≥ 200 simulated A/A
histories of ``K`` commits, ``RUNS`` runs each, with the noise of real HTEX noop runs: the
variance parts ``perflab precision`` measured on a quiet node (bench/precision_grid_htex_quiet.json,
``pilot_parts``: σ_b² between runs, σ_w² within a window per task) at a window of ``TASKS``
tasks, plus a slow AR(1) drift of the machine in time (its step sd half of σ_b, so points
measured at different times differ by more than runs of one point do), the points measured
in the atlas's spread order (``atlas.steps.spread``). Each history
goes through ``atlas.detect.steps`` (suspected) and each suspected step through the paired
gate on fresh runs of its two sides, in rounds while undecided (confirmed), as ``atlas update``
does. Prints the share
of histories with a step suspected and confirmed, each with its 95 % Clopper–Pearson
interval, as JSON.

    python bench/atlas_false_alarms.py [--histories 400] [--seed 0] [--order spread|oldest]
"""

from __future__ import annotations

import argparse
import json
import math
from collections.abc import Callable
from pathlib import Path

import numpy as np

from perflab.analysis.stats import clopper_pearson
from perflab.atlas import detect
from perflab.atlas.steps import ROUNDS, round_plan, spread
from perflab.compare.stats import sequential

K, RUNS, TASKS, ALPHA, MIN_EFFECT = 60, 4, 2000, 0.05, 0.05
PARTS = Path(__file__).with_name("precision_grid_htex_quiet.json")


def fresh_run(level: float, sd: float, rng: np.random.Generator) -> Callable[[], float]:
    """One run now: the machine's present level and the run's own noise."""
    return lambda: float(np.exp(level + rng.normal(0, sd)))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--histories", type=int, default=400)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument(
        "--order",
        choices=["spread", "oldest"],
        default="spread",
        help="The order points are measured in: the atlas's, or oldest first.",
    )
    args = ap.parse_args()
    parts = json.loads(PARTS.read_text())["pilot_parts"]
    sd_run = math.sqrt(parts["var_between"] + parts["var_within"] / TASKS)
    sd_drift = 0.5 * math.sqrt(parts["var_between"])
    rng = np.random.default_rng(args.seed)
    suspected = confirmed = 0
    order = spread(K) if args.order == "spread" else list(range(K))
    slot = {i: t for t, i in enumerate(order)}  # when each point is measured
    for _ in range(args.histories):
        drift = np.zeros(K + 1)  # the machine's level at each measuring slot, then now
        for t in range(1, K + 1):
            drift[t] = 0.8 * drift[t - 1] + rng.normal(0, sd_drift)
        runs = [list(np.exp(drift[slot[i]] + rng.normal(0, sd_run, RUNS))) for i in range(K)]
        found = detect.steps(runs, ALPHA, MIN_EFFECT)
        suspected += bool(found)
        hit = False
        for f in found:
            # fresh runs of both sides, ABBA-paired now: they share the machine's present
            # level; an undecided round is followed by the next (twice the runs, half the level)
            fresh = fresh_run(float(drift[K]), sd_run, rng)
            for r in range(ROUNDS):
                level, n_max = round_plan(ALPHA, RUNS, r)
                d, _, _ = sequential(fresh, fresh, RUNS, n_max, MIN_EFFECT, level)
                if d.verdict != "inconclusive":
                    break
            hit |= d.verdict == f.direction
        confirmed += hit
    n = args.histories
    out = {
        "histories": n, "order": args.order, "commits": K, "runs_per_commit": RUNS,
        "tasks_per_run": TASKS,
        "sd_run_log": sd_run, "sd_drift_step_log": sd_drift, "alpha": ALPHA,
        "suspected": suspected, "suspected_share": suspected / n,
        "suspected_ci95": clopper_pearson(suspected, n),
        "confirmed": confirmed, "confirmed_share": confirmed / n,
        "confirmed_ci95": clopper_pearson(confirmed, n),
    }  # fmt: skip
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
