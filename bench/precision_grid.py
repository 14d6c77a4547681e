"""The window grid on a real engine: CI half-width per wall-hour of A/A pairs, interleaved.

    PYTHONPATH=src python bench/precision_grid.py --target parsl-htex --rounds 3 \
        [--windows 500,2000,8000,32000] [--pick N] [--out grid.json]

Each round runs one A/A pair (two fresh runs, back to back) of every design in a shuffled
order: the grid's windows, the planner's pick (``--pick``, from ``perflab precision``), and
today's default sizing (``--time 5``: parsl-perf's estimate mode, batches grown until one takes
≥ 75 % of 5 s). For each design: the sd of a pair's log difference, the mean wall time of a
run (the record's phases' total), and the 95 % half-width one wall-hour of such pairs gives,
z · sd / sqrt(pairs per hour). Few rounds give rough sds (k − 1 degrees of freedom each).
"""

from __future__ import annotations

import argparse
import json
import math
import random
import statistics

import numpy as np

from perflab.compare.precision import Parts
from perflab.run.measure import measure
from perflab.spec import RunSpec

Z95 = 1.96


def design_spec(target: str, window: int | None) -> RunSpec:
    if window is None:
        return RunSpec(target=target, workload="noop", time_s=5.0)
    return RunSpec(target=target, workload="noop", tasks=window)


def one(spec: RunSpec) -> tuple[float, float]:
    rec = measure(spec)
    if rec.status != "ok" or not rec.us_per_task:
        raise SystemExit(f"run failed: {rec.error}")
    return float(rec.us_per_task), float(rec.measurement["phases"]["total"])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--target", default="parsl-htex")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--windows", default="500,2000,8000,32000")
    ap.add_argument("--pick", type=int, help="The planner's window (from perflab precision).")
    ap.add_argument("--out")
    ap.add_argument("--report", help="Print a saved --out file (no runs).")
    ap.add_argument("--parts", help="precision.json: add the planner's predicted ±/hour.")
    args = ap.parse_args()
    if args.report:
        with open(args.report) as f:
            show(json.load(f), args.parts)
        return
    designs: dict[str, int | None] = {f"{int(w):,}": int(w) for w in args.windows.split(",")}
    if args.pick:
        designs[f"plan {args.pick:,}"] = args.pick
    designs["default --time 5"] = None
    pairs: dict[str, list[tuple[float, float]]] = {d: [] for d in designs}
    walls: dict[str, list[float]] = {d: [] for d in designs}
    rng = random.Random(0)
    for r in range(args.rounds):
        order = list(designs)
        rng.shuffle(order)
        for name in order:
            spec = design_spec(args.target, designs[name])
            (va, wa), (vb, wb) = one(spec), one(spec)
            pairs[name].append((va, vb))
            walls[name] += [wa, wb]
            print(f"round {r + 1} {name}: {va:.1f} {vb:.1f} µs/task, {wa:.1f}+{wb:.1f} s",
                  flush=True)  # fmt: skip
    rows = []
    for name in designs:
        d = np.log([b for _, b in pairs[name]]) - np.log([a for a, _ in pairs[name]])
        sd = float(d.std(ddof=1)) if len(d) > 1 else math.nan
        wall = statistics.fmean(walls[name])
        per_hour = 3600 / (2 * wall)
        hw = math.expm1(Z95 * sd / math.sqrt(per_hour))
        rows.append({"design": name, "pairs": len(d), "sd_pair_log": sd, "run_wall_s": wall,
                     "half_width_per_hour": hw})  # fmt: skip
    if args.out:
        with open(args.out, "w") as f:
            json.dump(rows, f, indent=1)
    show(rows, args.parts)


def predicted(parts: Parts, n: int) -> float:
    """The 95 % half-width an hour of pairs of window n gives, by the parts."""
    per_hour = 3600 / (2 * parts.run_s(n))
    return math.expm1(Z95 * math.sqrt(2 * parts.var_run(n) / per_hour))


def show(rows: list[dict], parts_path: str | None) -> None:
    parts = None
    if parts_path:
        with open(parts_path) as f:
            (entry,) = json.load(f).values()
        parts = Parts(**entry["parts"])
    best = min(r["half_width_per_hour"] for r in rows)
    print(f"\n{'design':>18} {'pairs':>5} {'sd pair':>8} {'run s':>7} {'±/hour':>8} {'÷best':>6}"
          f"{' predicted' if parts else ''}")  # fmt: skip
    for r in rows:
        window = r["design"].replace("plan ", "").replace(",", "")
        pred = ""
        if parts and window.isdigit():
            pred = f" {predicted(parts, int(window)):9.2%}"
        print(
            f"{r['design']:>18} {r['pairs']:5d} {r['sd_pair_log']:8.3f} {r['run_wall_s']:7.1f} "
            f"{r['half_width_per_hour']:8.2%} {r['half_width_per_hour'] / best:6.2f}{pred}"
        )


if __name__ == "__main__":
    main()
