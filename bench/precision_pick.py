"""How near the optimum is the window picked from pilots at two windows? Synthetic truths.

    PYTHONPATH=src python bench/precision_pick.py [--seeds 200] [--pairs 4,8,16]

For each truth (S, c, σ_b², σ_w²) and pilot size, pilots are drawn (A/A pairs at 500 and
8,000 tasks, log-normal noise of the truth's variance, 5 % noise on the wall times) and the
window is picked by ``compare.pilot.estimate`` (least mean regret over its bootstrap) and by
plugging in the point estimate (``best_window``). Printed: the share of seeds whose pick's
true half-width per wall-hour is within 10 % of the true optimum's (Wilson 95 % interval), and
the median and 90th percentile of that ratio. The optimum is taken within the pick's trusted
range (the pilots' windows widened 4× each way).
"""

from __future__ import annotations

import argparse
import math

import numpy as np

from perflab.analysis.stats import wilson_ci
from perflab.compare import pilot as pl
from perflab.compare.precision import Parts

TRUTHS = {
    "long best (HTEX, load)": Parts(20.0, 0.0026, 0.0013, 42.0),
    "replay's HTEX": Parts(30.0, 0.0005, 0.03**2, 1.5**2),
    "short best": Parts(5.0, 0.001, 0.01, 1.0),
    "sub-batch HTEX": Parts(20.0, 0.0026, 0.05, 5.9**2),
}
WINDOWS = (500, 8000)


def draw(truth: Parts, pairs: int, rng: np.random.Generator) -> list[pl.PilotRun]:
    runs = []
    for _ in range(pairs):
        for n in WINDOWS:
            for _ in range(2):
                value = 100 * math.exp(rng.normal(0, math.sqrt(truth.var_run(n))))
                runs.append(pl.PilotRun(n, value, truth.run_s(n) * math.exp(rng.normal(0, 0.05))))
    return runs


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", type=int, default=200)
    ap.add_argument("--pairs", default="4,8,16")
    args = ap.parse_args()
    bounds = pl.trusted(WINDOWS)
    print(f"{'truth':>24} {'n*':>7} {'pairs':>5} {'pick ≤1.1':>10} {'95% CI':>12} "
          f"{'median':>7} {'p90':>6} {'plug-in ≤1.1':>13}")  # fmt: skip
    for name, truth in TRUTHS.items():
        n_best = pl.best_window(truth, bounds)
        best = pl.per_hour(truth, n_best)
        for k in (int(x) for x in args.pairs.split(",")):
            rng = np.random.default_rng(k)
            picked, plugged = [], []
            for seed in range(args.seeds):
                fit = pl.estimate(draw(truth, k, rng), seed=seed, boot=200)
                picked.append(pl.per_hour(truth, fit.window) / best)
                plugged.append(pl.per_hour(truth, pl.best_window(fit.parts, bounds)) / best)
            r = np.array(picked)
            hits = int(np.sum(r <= 1.1))
            lo, hi = wilson_ci(hits, len(r))
            print(f"{name:>24} {n_best:7,} {k:5d} {hits / len(r):10.0%} {lo:5.0%}–{hi:5.0%} "
                  f"{np.median(r):7.3f} {np.percentile(r, 90):6.2f} "
                  f"{np.mean(np.array(plugged) <= 1.1):13.0%}", flush=True)  # fmt: skip


if __name__ == "__main__":
    main()
