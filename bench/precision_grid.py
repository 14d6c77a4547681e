"""The window grid on a real engine: CI half-width per wall-hour of A/A pairs, interleaved,
against the planner's pick from pilot runs at two windows.

    PYTHONPATH=src python bench/precision_grid.py --target parsl-htex --rounds 2 \
        [--pilot 500,8000 --pilot-pairs 3] [--windows 500,2000,8000,32000] [--out grid.json]
    PYTHONPATH=src python bench/precision_grid.py --report grid.json

1. Pilot: ``--pilot-pairs`` A/A pairs (two fresh runs back to back) at each ``--pilot`` window,
   interleaved; ``compare.pilot.estimate`` fits σ_b² + σ_w²/n and S + c·n to them and picks the
   window (least mean regret over its bootstrap).
2. Grid: each round runs one A/A pair of every design in a shuffled order: the grid's windows,
   the planner's pick, and today's default sizing (``--time 5``, which is parsl-perf's
   estimate mode — batches grown until one takes ≥ 75 % of the target — with perflab's 5 s
   target).

For each design: the sd of a pair's log difference (k pairs, k degrees of freedom: the mean
of an A/A difference is zero), the mean wall time of a run as the caller pays it (measure()
from call to return), and the 95 % half-width one wall-hour of such pairs gives,
1.96 · sd / sqrt(pairs per hour), with its χ² interval. "smoothed" fits the model to every
pair of the grid and the pilot, which is far less noisy than any one design's few pairs.
Every run is kept in ``--out`` (``runs``), for replays.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import statistics
import time

import numpy as np

from perflab.analysis.stats import Z95
from perflab.compare import pilot as pl
from perflab.compare.precision import Parts
from perflab.run.measure import measure
from perflab.spec import RunSpec

TIMEOUT_S = [900.0]


def design_spec(target: str, workload: str, window: int | None) -> RunSpec:
    if window is None:
        return RunSpec(target=target, workload=workload, time_s=5.0, timeout_s=TIMEOUT_S[0])
    return RunSpec(target=target, workload=workload, tasks=window, timeout_s=TIMEOUT_S[0])


def one(spec: RunSpec) -> dict:
    t0 = time.monotonic()
    rec = measure(spec)
    wall = time.monotonic() - t0
    if rec.status != "ok" or not rec.us_per_task:
        raise SystemExit(f"run failed: {rec.error}")
    return {"tasks": int(rec.tasks or 0), "us_per_task": float(rec.us_per_task), "wall_s": wall,
            "phases_total_s": float(rec.measurement["phases"]["total"])}  # fmt: skip


def pair(spec: RunSpec, label: str, out: list[dict], save: str | None) -> None:
    a, b = one(spec), one(spec)
    out += [{**a, "design": label}, {**b, "design": label}]
    if save:  # after every pair: a bench cut short keeps what it measured
        with open(save + ".partial", "w") as f:
            json.dump(out, f)
    print(f"{label}: {a['us_per_task']:.1f} {b['us_per_task']:.1f} µs/task, "
          f"{a['wall_s']:.1f}+{b['wall_s']:.1f} s", flush=True)  # fmt: skip


def pilot_runs(runs: list[dict], design: str) -> list[pl.PilotRun]:
    return [pl.PilotRun(r["tasks"], r["us_per_task"], r["wall_s"]) for r in runs
            if r["design"] == design]  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--target", default="parsl-htex")
    ap.add_argument("--workload", default="noop")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--windows", default="500,2000,8000,32000")
    ap.add_argument("--pilot", default="500,8000")
    ap.add_argument("--pilot-pairs", type=int, default=3)
    ap.add_argument("--pilot-from", help="A --out(.partial) file whose pilot runs to reuse.")
    ap.add_argument("--resume", action="store_true", help="Keep --pilot-from's grid runs too.")
    ap.add_argument("--seed", type=int, default=0, help="Of the designs' order in a round.")
    ap.add_argument("--timeout", type=float, default=900.0, help="Seconds a run may take.")
    ap.add_argument("--out")
    ap.add_argument("--report", help="Print a saved --out file (no runs).")
    ap.add_argument("--against", help="With --report: a second grid's --out file; prints the "
                    "ratio of their best windows with a bootstrap interval.")  # fmt: skip
    args = ap.parse_args()
    if args.report:
        with open(args.report) as f:
            data = json.load(f)
        if isinstance(data, list):  # a .partial file: the runs so far
            data = {"runs": data, "pick": pl.estimate(pilot_runs(data, "pilot")).window}
        show(data)
        if args.against:
            with open(args.against) as f:
                other = json.load(f)["runs"]
            r, (lo, hi) = best_window_ratio(data["runs"], other)
            print(f"best window ÷ {args.against}'s: ×{r:.2f} (95% CI {lo:.2f}–{hi:.2f})")
        return
    t_start = time.monotonic()
    TIMEOUT_S[0] = args.timeout
    runs: list[dict] = []
    if args.pilot_from:  # a bench cut short: its pilot (and with --resume its grid) kept
        with open(args.pilot_from) as f:
            runs = [r for r in json.load(f) if args.resume or r["design"] == "pilot"]
    for _ in range(0 if args.pilot_from else args.pilot_pairs):
        for w in (int(x) for x in args.pilot.split(",")):
            pair(design_spec(args.target, args.workload, w), "pilot", runs, args.out)
    fit = pl.estimate(pilot_runs(runs, "pilot"))
    print(f"pilot fit: {fit.parts}; pick {fit.window:,} tasks", flush=True)
    designs: dict[str, int | None] = {f"{int(w):,}": int(w) for w in args.windows.split(",")}
    if fit.window not in designs.values():  # a pick on the grid is measured once, there
        designs[f"plan {fit.window:,}"] = fit.window
    designs["default --time 5"] = None
    rng = random.Random(args.seed)
    for _ in range(args.rounds):
        order = list(designs)
        rng.shuffle(order)
        for name in order:
            pair(design_spec(args.target, args.workload, designs[name]), name, runs, args.out)
    data = {"target": args.target, "workload": args.workload, "pick": fit.window,
            "pilot_parts": fit.parts.__dict__, "bench_wall_s": time.monotonic() - t_start,
            "runs": runs}  # fmt: skip
    if args.out:
        with open(args.out, "w") as f:
            json.dump(data, f, indent=1)
    show(data)


def rows(runs: list[dict]) -> list[dict]:
    """Per design: pairs, sd of a pair's log ratio, run wall, ±/hour with its 95 % interval."""
    out = []
    for name in dict.fromkeys(r["design"] for r in runs if r["design"] != "pilot"):
        rs = [r for r in runs if r["design"] == name]
        v = np.log([r["us_per_task"] for r in rs]).reshape(-1, 2)
        d = v[:, 1] - v[:, 0]
        k = len(d)
        var = float(np.mean(d**2))
        wall = statistics.fmean(r["wall_s"] for r in rs)
        per_hour = 3600 / (2 * wall)
        lo, hi = pl.chi2_ci(var, k)
        out.append({"design": name, "pairs": k, "tasks": statistics.fmean(r["tasks"] for r in rs),
                    "sd_pair_log": math.sqrt(var), "run_wall_s": wall,
                    "half_width_per_hour": math.expm1(Z95 * math.sqrt(var / per_hour)),
                    "ci": (math.expm1(Z95 * math.sqrt(lo / per_hour)),
                           math.expm1(Z95 * math.sqrt(hi / per_hour)))})  # fmt: skip
    return out


def smoothed(runs: list[dict]) -> pl.Fitted:
    """The model fitted to every pair of the grid's fixed windows and of the pilot."""
    fixed = [r for r in runs if r["design"] == "pilot" or r["design"].replace(",", "").isdigit()]
    return pl.estimate([pl.PilotRun(r["tasks"], r["us_per_task"], r["wall_s"]) for r in fixed])


def _resample(runs: list[dict], rng: np.random.Generator) -> list[dict]:
    """The runs with each design's pairs drawn with replacement (pairs stay whole)."""
    out: list[dict] = []
    for name in dict.fromkeys(r["design"] for r in runs):
        rs = [r for r in runs if r["design"] == name]
        pairs = [rs[i : i + 2] for i in range(0, len(rs) - 1, 2)]
        for j in rng.integers(len(pairs), size=len(pairs)):
            out += pairs[j]
    return out


def smoothed_ratio_ci(runs: list[dict], pick: int, boot: int = 400) -> tuple[float, float]:
    """95 % percentile-bootstrap interval of the pick's ±/hour over the smoothed best's, the
    model refitted to every resample of the pairs."""
    rng = np.random.default_rng(0)
    got = []
    for _ in range(boot):
        fixed = [r for r in _resample(runs, rng)
                 if r["design"] == "pilot" or r["design"].replace(",", "").isdigit()]  # fmt: skip
        f = pl.estimate([pl.PilotRun(r["tasks"], r["us_per_task"], r["wall_s"]) for r in fixed],
                        boot=0).parts  # fmt: skip
        best = pl.per_hour(f, pl.best_window(f, (100, 200_000)))
        if best > 0:
            got.append(pl.per_hour(f, pick) / best)
    return float(np.percentile(got, 2.5)), float(np.percentile(got, 97.5))


def _best_window(runs: list[dict]) -> int:
    fixed = [r for r in runs if r["design"] == "pilot" or r["design"].replace(",", "").isdigit()]
    f = pl.estimate([pl.PilotRun(r["tasks"], r["us_per_task"], r["wall_s"]) for r in fixed],
                    boot=0).parts  # fmt: skip
    return pl.best_window(f, (100, 200_000))


def best_window_ratio(
    runs: list[dict], other: list[dict], boot: int = 400
) -> tuple[float, tuple[float, float]]:
    """This grid's smoothed best window over another's, with a 95 % percentile-bootstrap
    interval (each grid's pairs resampled on their own, both models refitted)."""
    rng = np.random.default_rng(2)
    got = [_best_window(_resample(runs, rng)) / _best_window(_resample(other, rng))
           for _ in range(boot)]  # fmt: skip
    ratio = _best_window(runs) / _best_window(other)
    return ratio, (float(np.percentile(got, 2.5)), float(np.percentile(got, 97.5)))


def measured_vs_best(runs: list[dict], pick: int, boot: int = 2000) -> None:
    """The plan's design against the best measured design, each from its own pairs: the
    ratio of their ±/hour with a bootstrap interval (the best chosen anew in each resample,
    so the interval carries the winner's curse, not only the pick's noise)."""
    grid = [r for r in runs if r["design"] != "pilot"]
    names = list(dict.fromkeys(r["design"] for r in grid))
    plan = next((n for n in names if n == f"plan {pick:,}" or n == f"{pick:,}"), None)
    if plan is None:
        return
    rng = np.random.default_rng(1)

    def ratio(rs: list[dict]) -> float:
        ph = {r["design"]: r["half_width_per_hour"] for r in rows(rs)}
        return ph[plan] / min(ph.values())

    got = [ratio(_resample(grid, rng)) for _ in range(boot)]
    print(f"the plan's design against the best measured design: ×{ratio(grid):.2f} (95% CI "
          f"{np.percentile(got, 2.5):.2f}–{np.percentile(got, 97.5):.2f})")  # fmt: skip


def show(data: dict) -> None:
    table = rows(data["runs"])
    best = min(r["half_width_per_hour"] for r in table)
    fit = smoothed(data["runs"])
    p: Parts = fit.parts
    print(f"\n{'design':>18} {'pairs':>5} {'tasks':>7} {'sd pair':>8} {'run s':>7} "
          f"{'±/hour':>8} {'95% CI':>15} {'÷best':>6} {'smoothed':>9}")  # fmt: skip
    for r in table:
        sm = math.expm1(pl.per_hour(p, r["tasks"]))
        print(
            f"{r['design']:>18} {r['pairs']:5d} {r['tasks']:7.0f} {r['sd_pair_log']:8.3f} "
            f"{r['run_wall_s']:7.1f} {r['half_width_per_hour']:8.2%} "
            f"{r['ci'][0]:6.1%}–{r['ci'][1]:6.1%} {r['half_width_per_hour'] / best:6.2f} "
            f"{sm:9.2%}"
        )
    n_best = pl.best_window(p, (100, 200_000))
    print(f"\nsmoothed fit (grid + pilot): S {p.fixed_s:.1f} s, c {p.task_s * 1e3:.2f} ms/task, "
          f"σ_b {math.sqrt(p.var_between):.1%}, σ_w {math.sqrt(p.var_within):.2f}; best window "
          f"{n_best:,} (95% CI {fit.n_star_ci[0]:,.0f}–{fit.n_star_ci[1]:,.0f}), "
          f"±{math.expm1(pl.per_hour(p, n_best)):.2%}/hour")  # fmt: skip
    pick = data["pick"]
    ratio = pl.per_hour(p, pick) / pl.per_hour(p, n_best)
    lo, hi = smoothed_ratio_ci(data["runs"], pick)
    print(f"the pilot's pick {pick:,}: ×{ratio:.2f} (95% CI {lo:.2f}–{hi:.2f}) of the smoothed "
          "best's ±/hour")  # fmt: skip
    measured_vs_best(data["runs"], pick)
    for secs in (120.0,):
        n = round(secs / p.task_s) if p.task_s > 0 else 0
        if n:
            print(f"parsl-perf's own default (--time {secs:.0f}: ~{n:,} tasks) by the fit: "
                  f"±{math.expm1(pl.per_hour(p, n)):.2%}/hour, "
                  f"×{pl.per_hour(p, n) / pl.per_hour(p, n_best):.2f} of the best")  # fmt: skip
    if "bench_wall_s" in data:
        print(f"bench wall time {data['bench_wall_s'] / 60:.1f} min")


if __name__ == "__main__":
    main()
