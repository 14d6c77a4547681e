"""Replays of precision-planned comparisons on synthetic noise with known parts.

    PYTHONPATH=src python bench/precision_replay.py [--sims 400]

Prints (1) the false-alarm rate of planned sequential comparisons over A/A replays, with its
Clopper–Pearson interval; (2) pairs to detect a planted +10 % change, the gate's sequential
looks against fixed-n at equal power; (3) the plan's calibration: reached half-width and wall
time against the planned ones. The parts resemble HTEX noop here: S ≈ 30 s, c ≈ 0.5 ms/task,
σ_b ≈ 3 %, σ_w ≈ 1.5 per task (a 2,000-task window has ~3.4 % within-run noise).
"""

from __future__ import annotations

import argparse
import statistics

from perflab.analysis.stats import clopper_pearson
from perflab.compare.precision import Parts
from perflab.compare.precision_replay import fixed_power, gate_replay, planned

TRUTH = Parts(fixed_s=30.0, task_s=0.0005, var_between=0.03**2, var_within=1.5**2)
ALPHA = 0.05


def false_alarms(sims: int) -> None:
    outs = [planned(TRUTH, 0.03, ALPHA, seed) for seed in range(sims)]
    bad = sum(o.verdict in ("faster", "slower") for o in outs)
    lo, hi = clopper_pearson(bad, sims)
    print(
        f"A/A planned (±3 %, alpha {ALPHA}): {bad}/{sims} said different = {bad / sims:.3f} "
        f"(95 % CI {lo:.3f}–{hi:.3f}); stopped: "
        + ", ".join(
            f"{s} {sum(o.stopped == s for o in outs)}" for s in sorted({o.stopped for o in outs})
        )
    )


def detection(sims: int, n: int = 500, n_max: int = 20) -> None:
    runs = [gate_replay(TRUTH, n, n_max, 1.10, ALPHA, s, early=True) for s in range(sims)]
    power = sum(v == "slower" for v, _ in runs) / sims
    asn = statistics.fmean(k for _, k in runs)
    fixed = next(k for k in range(4, 200) if fixed_power(TRUTH, n, k, 1.10, ALPHA, sims) >= power)
    aa = [gate_replay(TRUTH, n, n_max, 1.0, ALPHA, 50_000 + s, early=True) for s in range(sims)]
    fa = sum(v in ("faster", "slower") for v, _ in aa)
    print(
        f"+10 % planted, window {n:,}: sequential (looks to {n_max}) power {power:.2f} with "
        f"{asn:.1f} pairs on average; fixed-n reaches that power at {fixed} pairs "
        f"(A/A false alarms of the same sequence: {fa}/{sims})"
    )


def calibration(sims: int) -> None:
    for target in (0.03, 0.05):
        outs = [planned(TRUTH, target, ALPHA, 1000 + s) for s in range(sims)]
        hw = [o.half_width / o.planned.half_width for o in outs]
        wall = [o.wall_s / o.planned.wall_s for o in outs]
        print(
            f"plan ±{target:.0%} ({outs[0].planned.line()}): over {sims} comparisons the "
            f"reached half-width is {statistics.fmean(hw):.2f}× planned (median "
            f"{statistics.median(hw):.2f}, {sum(abs(x - 1) <= 0.2 for x in hw)}/{sims} within "
            f"20 %); wall {statistics.fmean(wall):.2f}× planned (median "
            f"{statistics.median(wall):.2f}, {sum(abs(x - 1) <= 0.25 for x in wall)}/{sims} "
            "within 25 %)"
        )


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--sims", type=int, default=400)
    args = ap.parse_args()
    false_alarms(args.sims)
    detection(args.sims, 500, 28)
    detection(args.sims, 2000, 12)
    calibration(max(20, args.sims // 4))
