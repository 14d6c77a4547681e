"""Is the plan calibrated? Planned comparisons from two-window pilots, replayed.

    PYTHONPATH=src python bench/precision_calibration.py [--sims 100] [--grid grid.json]

Each comparison is what ``perflab precision --windows 500,8000 --runs 8`` then
``compare --precision X%`` do, on a synthetic machine with known parts
(``precision_replay.pilot_planned``): 8 A/A pilot pairs at 500 and 8,000 tasks, the parts
fitted, the plan made within the pilots' trusted windows, the planned A/A comparison run
with its looks. Printed per truth and target: the reached CI half-width over the planned
one and the wall time spent over the planned one — mean (bootstrap 95 % interval), median,
and the share of single comparisons within 20 % (half-width) and 25 % (wall time).

The truths: the parts of the HTEX noop grid on this loaded machine (``--grid``: the model
fitted to every pair of bench/precision_grid.py's output, or the figures it gave when it
was written), and the replay's quieter HTEX of bench/precision_replay.py.
"""

from __future__ import annotations

import argparse
import json
import statistics

import numpy as np

from perflab.analysis.stats import percentile_ci
from perflab.compare.precision import Parts
from perflab.compare.precision_replay import pilot_planned

ALPHA = 0.05
TRUTHS = {
    "HTEX noop, loaded (grid fit)": Parts(20.0, 0.0026, 0.0013, 42.0),
    "HTEX noop, replay's": Parts(30.0, 0.0005, 0.03**2, 1.5**2),
}


def boot_mean_ci(x: list[float], seed: int = 0) -> tuple[float, float]:
    """The percentile bootstrap 95 % interval of the mean of ``x``."""
    rng = np.random.default_rng(seed)
    a = np.asarray(x)
    return percentile_ci(a[rng.integers(len(a), size=(2000, len(a)))].mean(axis=1))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sims", type=int, default=100)
    ap.add_argument("--targets", default="0.05,0.1")
    ap.add_argument("--grid", help="bench/precision_grid.py --out file: its fitted parts.")
    args = ap.parse_args()
    truths = dict(TRUTHS)
    if args.grid:
        import precision_grid  # the bench beside this one

        with open(args.grid) as f:
            truths["HTEX noop, loaded (grid fit)"] = precision_grid.smoothed(
                json.load(f)["runs"]
            ).parts
    for name, truth in truths.items():
        print(f"{name}: {truth}")
        for target in (float(t) for t in args.targets.split(",")):
            outs = [pilot_planned(truth, target, ALPHA, 7000 + s) for s in range(args.sims)]
            hw = [o.half_width / o.planned.width for o in outs]
            wall = [o.wall_s / o.planned.wall for o in outs]
            (hl, hh), (wl, wh) = boot_mean_ci(hw), boot_mean_ci(wall)
            tasks = statistics.median(o.planned.tasks for o in outs)
            pairs = statistics.median(o.planned.pairs for o in outs)
            print(
                f"  ±{target:.0%}: median plan {pairs:.0f} pairs of {tasks:,.0f} tasks; "
                f"half-width {statistics.fmean(hw):.2f}× planned ({hl:.2f}–{hh:.2f}; median "
                f"{statistics.median(hw):.2f}; {sum(abs(x - 1) <= 0.2 for x in hw)}/{len(hw)} "
                f"within 20 %), wall {statistics.fmean(wall):.2f}× planned ({wl:.2f}–{wh:.2f}; "
                f"median {statistics.median(wall):.2f}; "
                f"{sum(abs(x - 1) <= 0.25 for x in wall)}/{len(wall)} within 25 %)",
                flush=True,
            )


if __name__ == "__main__":
    main()
