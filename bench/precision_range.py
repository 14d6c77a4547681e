"""Does the plan's range (``compare.plan_range``) cover the runs a comparison actually needs?
Synthetic truths.

    PYTHONPATH=src python bench/precision_range.py [--seeds 200] [--pairs 4,8] [--target 0.1]

For each truth (S, c, σ_b², σ_w²; those of bench/precision_pick.py) and pilot size, pilots are
drawn (A/A pairs at 500 and 8,000 tasks, log-normal noise of the truth's variance, 5 % noise on
the wall times), fitted (``pilot.estimate``), and a comparison planned at ±target. Printed:
the share of seeds whose range of pairs contains the pairs the truth needs at the planned
window and confidence (Wilson 95 % interval) — by the stored points' χ² (``ends`` with the
window: what plans use) and by the joint ends of the stored intervals (what parts stored
before the points were kept get) — the median range (high ÷ low pairs), and the same after
one planned comparison of the truth is pooled in (``refine.pool``).
"""

from __future__ import annotations

import argparse
import dataclasses
import math

import numpy as np
from precision_pick import TRUTHS, draw

from perflab.analysis.stats import wilson_ci
from perflab.compare import parts as mp
from perflab.compare import pilot, refine
from perflab.compare import plan_range as pr
from perflab.compare import precision as pp


def covered(
    m: mp.Measured, truth: pp.Parts, target: float, points: bool
) -> tuple[bool, float, pp.Plan]:
    pl = pp.plan(m.parts, target, pp.planned_level(0.05), m.bounds())
    if not points:
        m = dataclasses.replace(m, observations=[])
    pl = pr.ranged(pl, pr.ends(m, 1.0, pl.tasks))
    assert pl.pairs_range is not None
    lo, hi = pl.pairs_range
    return lo <= pr.needed(truth, pl) <= hi, hi / lo, pl


def row(truth: pp.Parts, pairs: int, seeds: int, target: float) -> list[str]:
    hits = {"points": 0, "ends": 0, "pooled": 0}
    spans: list[float] = []
    for seed in range(seeds):
        rng = np.random.default_rng(seed)
        m = mp.from_pilot(pilot.estimate(draw(truth, pairs, rng), seed), 4 * pairs)
        ok, span, pl = covered(m, truth, target, True)
        hits["points"] += ok
        spans.append(span)
        hits["ends"] += covered(m, truth, target, False)[0]
        sd = math.sqrt(truth.var_run(pl.tasks))
        a, b = (list(100 * np.exp(sd * rng.standard_normal(pl.pairs))) for _ in range(2))
        walls = list(truth.run_s(pl.tasks) * np.exp(0.05 * rng.standard_normal(2 * pl.pairs)))
        new = refine.from_comparison(a, b, walls, pl.tasks)
        hits["pooled"] += covered(refine.pool(m, new, seed), truth, target, True)[0]

    def share(k: int) -> str:
        lo, hi = wilson_ci(k, seeds)
        return f"{k / seeds:.0%} ({lo:.0%}–{hi:.0%})"

    return [share(hits["points"]), f"{np.median(spans):.1f}", share(hits["ends"]),
            share(hits["pooled"])]  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=200)
    ap.add_argument("--pairs", default="4,8")
    ap.add_argument("--target", type=float, default=0.1)
    args = ap.parse_args()
    print("| truth | pilot pairs | range covers (χ² of the points) | median high ÷ low | "
          "joint interval ends | after one comparison pooled |")  # fmt: skip
    print("|---|---|---|---|---|---|")
    for name, truth in TRUTHS.items():
        for k in (int(x) for x in args.pairs.split(",")):
            print(f"| {name} | {k} | " + " | ".join(row(truth, k, args.seeds, args.target)) + " |")


if __name__ == "__main__":
    main()
