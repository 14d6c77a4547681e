"""What does ``--isolate`` change on a busy node? The CV of a benchmark with and without it,
with CPU-bound co-runners, runs interleaved (ABBA: off, on, on, off …).

    PYTHONPATH=src python bench/isolate_ab.py [--runs 20] [--co-runners 2] [--htex]
        [--htex-only] [--tasks 2000] [--cpus 0-1] [--out bench/out/isolate_ab.json]

``--co-runners N`` starts N ``python3 -c 'while 1: pass'`` for the whole bench (stopped at
the end). Measured: a command's wall time (``COMMAND``) and, with ``--htex``, HTEX noop's
CPU per task (``--tasks``, 2,000 a run). Printed per benchmark and mode: the runs, the median, the
CV with its 95 % bootstrap interval, and the load the runs recorded. Needs root (or a
delegated cgroup: ``PERFLAB_CGROUP``).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from perflab.analysis.stats import percentile_ci
from perflab.compare.busy import load_of, load_text
from perflab.compare.gate import metric_value
from perflab.compare.stats import abba
from perflab.prepare import prepare
from perflab.run.measure import measure
from perflab.spec import RunSpec

COMMAND = "python3 -c 'print(sum(i * i for i in range(1_500_000)) % 7 + 1)'"


def cv_ci(x: list[float], seed: int = 0) -> tuple[float, float, float]:
    a = np.asarray(x, float)
    rng = np.random.default_rng(seed)
    boots = a[rng.integers(len(a), size=(2000, len(a)))]
    lo, hi = percentile_ci(boots.std(axis=1, ddof=1) / boots.mean(axis=1))
    return float(a.std(ddof=1) / a.mean()), lo, hi


def bench(name: str, spec: RunSpec, metric: str, runs: int, cpus: str | None) -> dict[str, Any]:
    modes = {
        "off": spec,
        "on": RunSpec(**{**spec.to_dict(), "isolate": f"cpus={cpus}" if cpus else "on"}),
    }
    ready = {m: prepare(s) for m, s in modes.items()}
    values: dict[str, list[float]] = {"off": [], "on": []}
    records: dict[str, list[Any]] = {"off": [], "on": []}
    for side in abba(runs):
        mode = "off" if side == "A" else "on"
        rec = measure(ready[mode])
        v = metric_value(rec, metric) if rec.status == "ok" else None
        if v is None:
            print(f"  {mode}: run {rec.run_id} {rec.status}: {rec.error}", file=sys.stderr)
            continue
        values[mode].append(v)
        records[mode].append(rec)
        print(f"    {name} isolate {mode}: {v:.4g}", flush=True)
    out: dict[str, Any] = {}
    for mode in ("off", "on"):
        cv, lo, hi = cv_ci(values[mode])
        load = load_of(records[mode])
        inside = all((r.measurement.get("isolation") or {}).get("proof", {}).get("inside")
                     for r in records[mode]) if mode == "on" else None  # fmt: skip
        out[mode] = {"n": len(values[mode]), "median": statistics.median(values[mode]), "cv": cv,
                     "cv_ci": [lo, hi], "load": load, "all_inside": inside,
                     "values": values[mode]}  # fmt: skip
        print(f"  {name} {metric}, isolate {mode}: n={len(values[mode])}, median "
              f"{statistics.median(values[mode]):.4g}, CV {cv:.1%} (95% CI {lo:.1%}–{hi:.1%}); "
              f"{load_text(load)}", flush=True)  # fmt: skip
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=20, help="Runs per mode.")
    ap.add_argument("--co-runners", type=int, default=2)
    ap.add_argument("--htex", action="store_true")
    ap.add_argument("--htex-only", action="store_true", help="HTEX noop only (no command).")
    ap.add_argument("--tasks", type=int, default=2000, help="HTEX noop tasks a run.")
    ap.add_argument("--cpus", help="With isolation, also this cpuset (e.g. 0-1).")
    ap.add_argument("--out", default="bench/out/isolate_ab.json")
    args = ap.parse_args()
    home = Path(tempfile.mkdtemp(prefix="perflab-isolate-ab-"))
    os.environ["PERFLAB_HOME"] = str(home)
    (home / "runs").mkdir(mode=0o700)
    hogs = [subprocess.Popen([sys.executable, "-c", "while 1: pass"])
            for _ in range(args.co_runners)]  # fmt: skip
    result: dict[str, Any] = {"co_runners": args.co_runners, "runs": args.runs, "cpus": args.cpus}
    try:
        print(f"{args.co_runners} CPU-bound co-runners; {os.cpu_count()} cores", flush=True)
        spec = RunSpec(command=COMMAND, cwd=str(home))
        if not args.htex_only:
            result["command"] = bench("command", spec, "wall_s", args.runs, args.cpus)
        if args.htex or args.htex_only:
            htex = RunSpec(target="parsl-htex", workload="noop", tasks=args.tasks, warmup=20)
            result["htex"] = bench("HTEX noop", htex, "cpu_us_per_task", args.runs, args.cpus)
    finally:
        for h in hogs:
            h.kill()
            h.wait()
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(result, indent=1))
    print(f"written {args.out}")


if __name__ == "__main__":
    main()
