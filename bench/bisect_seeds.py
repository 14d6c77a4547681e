"""The bisection's error rates and runs on a simulated truth, sequential against fixed n.

    .venv/bin/python bench/bisect_seeds.py                  # planted at 13 and 29 of 41
    .venv/bin/python bench/bisect_seeds.py --random --seeds 20

41 points (commits), two planted steps of +10 % and +20 %; each run is the point's cost
times seeded log-normal noise (sd 0.02 of a run's log, and a slow drift both runs of a pair
share), compared through the sequential paired gate of ``compare`` (``bisect/synthetic.py``).
For each seed it prints the culprits named and the runs used by the sequential search (each
comparison stops when decided, 6 to 20 runs per side) and by the fixed-n search (20 runs per
side always) at the same levels, then how often both culprits were found and how often a
false one was named. No wall-clock time is involved: the figures are the same on any machine.
"""

from __future__ import annotations

import argparse
import random

from perflab.bisect.search import bisect
from perflab.bisect.synthetic import simulated_measure


def costs_at(i: int, j: int, n: int = 41) -> list[float]:
    return [(1.1 if k >= i else 1.0) * (1.2 if k >= j else 1.0) for k in range(n)]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--random", action="store_true", help="Plant the steps at random points.")
    ap.add_argument("--alpha", type=float, default=0.05)
    ns = ap.parse_args()
    tally = {"seq": [0, 0, 0], "fixed": [0, 0, 0]}  # found, false, runs
    print("| seed | planted | sequential: named | runs | fixed n: named | runs | shares |")
    print("|---|---|---|---|---|---|---|")
    for seed in range(ns.seeds):
        i, j = sorted(random.Random(seed).sample(range(1, 41), 2)) if ns.random else (13, 29)
        row = [str(seed), f"{i}, {j}"]
        for mode in ("seq", "fixed"):
            measure = simulated_measure(costs_at(i, j), seed=seed, fixed=mode == "fixed")
            s = bisect(41, measure, alpha=ns.alpha)
            named = {c.index for c in s.culprits}
            t = tally[mode]
            t[0] += {i, j} <= named
            t[1] += bool(named - {i, j})
            t[2] += s.runs
            row += [", ".join(map(str, sorted(named))) or "-", str(s.runs)]
            if mode == "seq":
                shares = "; ".join(
                    f"{c.share:.0%} ({c.share_low:.0%}–{c.share_high:.0%})" for c in s.culprits
                )
        print("| " + " | ".join([*row, shares]) + " |")
    for mode, (found, false, runs) in tally.items():
        print(f"{mode}: both found {found}/{ns.seeds}, a false culprit {false}/{ns.seeds}, "
              f"{runs} runs")  # fmt: skip


if __name__ == "__main__":
    main()
