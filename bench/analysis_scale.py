"""``perflab analyze big.csv --json`` end to end, as a user runs it, and where its time goes.

    .venv/bin/python bench/analysis_scale.py [--sizes 15000,1000000] [--factors 30] [--naive]

For each size: a dataset CSV shaped like ``perflab export`` writes it (every metric column,
ISO timestamps, the ``treatments`` list and one 0/1 column per factor; random sets, each
run 30 times, so 1,000,000 runs hold ~33,000 distinct sets) is analysed by a fresh
``perflab analyze FILE --json`` process: wall time and that process's peak RSS. Then the
same steps in this process, timed one by one (parse, dataset, analysis, JSON), and on the
smallest size the row-by-row parser (``read_csv`` + ``frame``) against the column-wise one,
and the analysis split into its parts (deltas, models on per-set statistics, best set and
Shapley); with ``--naive``, the set-level deltas against a naive all-pairs search too (140-180 s
at 15,000 runs).
Goals: 1,000,000 runs <= 10 s and <= 2 GiB end to end, the analysis alone <= 5 s;
15,000 runs <= 0.5 s analysis.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from perflab.analysis import synthetic
from perflab.analysis.analyze import analyze
from perflab.analysis.bestset import recommend
from perflab.analysis.claims import Predictor
from perflab.analysis.data import Dataset
from perflab.analysis.deltas import deltas, naive_deltas, set_means
from perflab.analysis.models import infer
from perflab.analysis.paths import Values, forbidden_pairs, shapley
from perflab.campaign.csvframe import read_frame
from perflab.campaign.dataset import frame, read_csv
from perflab.campaign.source import open_source
from perflab.run.record import METRICS


def write_csv(path: Path, runs: int, k: int) -> None:
    df = synthetic.generate(runs, k=k, seed=1, design="random", replicates=30)
    names = synthetic.names(k)
    x = df[names].to_numpy().astype(bool)
    ts = pd.to_datetime(df["timestamp"], unit="s", utc=True)
    out = pd.DataFrame(
        {
            "run_id": df["run_id"],
            "timestamp": ts.dt.strftime("%Y-%m-%dT%H:%M:%S.%f").str[:-3] + "+00:00",
            "status": "ok",
        }
    )
    for m in METRICS:
        out[m] = np.nan
    out["tasks"] = 1000
    out["us_per_task"] = df["us_per_task"]
    out["wall_s"] = df["us_per_task"] * 1e-3
    out["tasks_per_s"] = 1e6 / df["us_per_task"]
    arr = np.array(names)
    out["treatments"] = [",".join(arr[r]) for r in x]
    for j, f in enumerate(names):
        out[f] = x[:, j].astype(int)
    out.to_csv(path, sep=";", index=False)


def cli(path: Path) -> tuple[float, float]:
    """Wall seconds and peak RSS (GiB) of ``perflab analyze path --json``."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-m", "perflab", "analyze", str(path), "--json"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    assert os.waitstatus_to_exitcode(status) == 0, "perflab analyze failed"
    return wall, usage.ru_maxrss / 2**20


def parts(ds: Dataset) -> dict[str, float]:
    """The analysis's main parts: deltas, models (per-set statistics), best set + Shapley."""
    t = {}
    t0 = time.perf_counter()
    means = set_means(ds)
    d = deltas(ds, means)
    d.groupby("factor").apply(lambda g: np.average(g["delta"], weights=g["weight"]))
    t["deltas+effects"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    inf = infer(ds.y, ds.x, ds.factors, ds.t)  # 4 models on per-set statistics, CV, claims
    t["models+claims"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    pred = Predictor(inf.fits[inf.chosen], len(ds.factors))
    values = Values(inf.stats, pred)
    key = recommend(pred, ds.factors, forbidden_pairs(ds), [])["key"]
    members = [j for j in range(len(ds.factors)) if key >> j & 1][:16]
    shapley(values, 0, members)
    t["best set+shapley"] = time.perf_counter() - t0
    return t


def steps(path: Path) -> tuple[dict[str, float], Dataset]:
    t: dict[str, float] = {}
    t0 = time.perf_counter()
    src = open_source(str(path))
    t["parse CSV"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ds = src.dataset()
    t["dataset"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    a = analyze(ds)
    t["analysis"] = time.perf_counter() - t0
    if len(ds.y) <= 100_000:  # and warm (the first call in a process pays first-use costs)
        again = []
        for _ in range(3):
            t0 = time.perf_counter()
            analyze(ds)
            again.append(time.perf_counter() - t0)
        t["analysis again (best of 3)"] = min(again)
    t0 = time.perf_counter()
    json.dumps(a.to_json(), default=float)
    t["JSON"] = time.perf_counter() - t0
    return t, ds


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="15000,1000000")
    ap.add_argument("--factors", type=int, default=30)
    ap.add_argument("--naive", action="store_true", help="time the naive all-pairs deltas too")
    args = ap.parse_args()
    sizes = sorted(int(s) for s in args.sizes.split(","))
    print(f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f} at the start", flush=True)
    with tempfile.TemporaryDirectory() as d:
        for i, n in enumerate(sizes):
            path = Path(d) / f"big{n}.csv"
            write_csv(path, n, args.factors)
            wall, gib = cli(path)
            t, ds = steps(path)
            line = ", ".join(f"{k} {v:.2f} s" for k, v in t.items())
            print(
                f"{n:>9,} runs x {args.factors} factors ({path.stat().st_size / 2**20:.0f} MiB): "
                f"perflab analyze --json {wall:.1f} s, peak RSS {gib:.2f} GiB; "
                f"in process: {line}",
                flush=True,
            )
            inner = ", ".join(f"{k} {v:.2f} s" for k, v in parts(ds).items())
            print(f"  the analysis's parts: {inner}", flush=True)
            if i == 0:
                t0 = time.perf_counter()
                frame(read_csv(path, "x"))
                slow = time.perf_counter() - t0
                t0 = time.perf_counter()
                read_frame(path)
                fast = time.perf_counter() - t0
                print(
                    f"  CSV to frame: row by row {slow:.2f} s, column-wise {fast:.2f} s "
                    f"({slow / fast:.0f}x)",
                    flush=True,
                )
            if i == 0 and args.naive:
                t0 = time.perf_counter()
                deltas(ds)
                fast = time.perf_counter() - t0
                t0 = time.perf_counter()
                naive_deltas(ds)
                slow = time.perf_counter() - t0
                print(
                    f"  deltas: set-level {fast:.3f} s vs naive all-pairs {slow:.1f} s "
                    f"= {slow / fast:.0f}x faster",
                    flush=True,
                )
    print(f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f} at the end")


if __name__ == "__main__":
    main()
