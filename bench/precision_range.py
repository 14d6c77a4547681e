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

    PYTHONPATH=src python bench/precision_range.py --htex

replays the range on the stored HTEX noop data instead (no runs): the plans of
bench/precision_calibration_htex.json made again from the 4-pair pilot and from the pooled
68 pairs of bench/precision_grid_htex_quiet.json, with their ranges, against the runs the
comparisons took; then each planned comparison pooled in as ``--update-parts`` would (its
pair variance recovered from the half-width it reached at the planned level, n − 1 df; its
wall times as one mean) and the plan made again from the pooled parts.
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


def htex_plan(m: mp.Measured, target: float = 0.15, alpha: float = 0.01) -> pp.Plan:
    """The plan ``compare --precision 15% --max-time 600`` prints (default alpha 0.01)."""
    pl = pp.plan(m.parts, target, pp.planned_level(alpha), m.bounds())
    k_max = max(pl.pairs, min(pp.most_pairs(pl.pairs), int(600 // (2 * m.parts.run_s(pl.tasks)))))
    looks = list(pp.precision_looks(4, pl.pairs, k_max, alpha))
    pl = pp.expect(pl, m.parts, looks, max(2, pl.pairs // 2))
    return pr.ranged(pl, pr.ends(m, 1.0, pl.tasks), looks, max(2, pl.pairs // 2))


def htex() -> None:
    """The stored HTEX data replayed (see the module docstring)."""
    import json

    from precision_grid import pilot_runs, smoothed

    from perflab.analysis.sizing import t_quantile

    with open("bench/precision_grid_htex_quiet.json") as f:
        runs = json.load(f)["runs"]
    with open("bench/precision_calibration_htex.json") as f:
        cal = json.load(f)["comparisons"]
    pooled = smoothed(runs)
    start = {"pilot4": mp.from_pilot(pilot.estimate(pilot_runs(runs, "pilot")), 16),
             "pooled": mp.from_pilot(pooled, 2 * sum(pooled.pairs))}  # fmt: skip
    for name, m in start.items():
        done = [c for c in cal if c["parts"] == name]
        print(f"{name}: {htex_plan(m).line()}")
        walls = ", ".join(f"{float(c['wall_s']):.0f}" for c in done)
        print(f"  took {', '.join(str(c['n']) for c in done)} runs a side, {walls} s")
        for c in done:
            n, tasks = int(c["n"]), int(c["plan"]["tasks"])
            level = 1 - float(c["plan"]["confidence"])
            var_d = (math.log1p(float(c["half_width"])) / t_quantile(level, n - 1)) ** 2 * n
            wall = float(c["wall_s"]) / (2 * n)
            m = refine.pool(m, refine.Observation(tasks, var_d / 2, n - 1, wall, 0.0, 2 * n))
            print(f"  + comparison {c['i']} ({n} pairs): {htex_plan(m).line()}")
        p = m.parts
        print(f"  pooled parts: S {p.fixed_s:.1f} s ({m.fixed_ci[0]:.1f}–{m.fixed_ci[1]:.1f}), "
              f"σ_b² {p.var_between:.4f} ({m.between_ci[0]:.4f}–{m.between_ci[1]:.4f}), "
              f"σ_w² {p.var_within:.2f} ({m.within_ci[0]:.2f}–{m.within_ci[1]:.2f})")  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=200)
    ap.add_argument("--pairs", default="4,8")
    ap.add_argument("--target", type=float, default=0.1)
    ap.add_argument("--htex", action="store_true", help="Replay the stored HTEX noop data.")
    args = ap.parse_args()
    if args.htex:
        htex()
        return
    print("| truth | pilot pairs | range covers (χ² of the points) | median high ÷ low | "
          "joint interval ends | after one comparison pooled |")  # fmt: skip
    print("|---|---|---|---|---|---|")
    for name, truth in TRUTHS.items():
        for k in (int(x) for x in args.pairs.split(",")):
            print(f"| {name} | {k} | " + " | ".join(row(truth, k, args.seeds, args.target)) + " |")


if __name__ == "__main__":
    main()
