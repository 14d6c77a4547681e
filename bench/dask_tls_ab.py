"""What Dask's TLS costs: tasks/s of no-op tasks on a LocalCluster with and without it.

    .venv/bin/python bench/dask_tls_ab.py [--pairs 5] [--tasks 2000] [--workers 2]

perflab's dask engine always runs TLS (a throwaway certificate both ends must present: any
local user could otherwise run code on the workers). This bench times the same submit-and-
gather loop on a cluster with ``security=True`` (B) and on one without (A), interleaved in
pairs so drift spreads over both, and prints each side's median tasks/s and the ratio B/A
with a paired t interval of the per-pair log ratios (perflab.analysis.stats, as the tool's).
"""

from __future__ import annotations

import argparse
import math
import statistics
import tempfile
import time

import numpy as np

from perflab.analysis.stats import paired_t


def noop(i: int) -> int:
    return i


def tasks_per_s(tls: bool, tasks: int, workers: int) -> float:
    import dask
    from distributed import Client, LocalCluster

    routes = {"distributed.scheduler.http.routes": [], "distributed.worker.http.routes": []}
    with tempfile.TemporaryDirectory() as d, dask.config.set(routes):
        cluster = LocalCluster(
            n_workers=workers, threads_per_worker=1, processes=True, host="127.0.0.1",
            security=True if tls else None, dashboard_address="127.0.0.1:0", local_directory=d,
        )  # fmt: skip
        with cluster, Client(cluster) as client:
            client.gather(client.map(noop, range(50), pure=False))  # warm-up, not counted
            t0 = time.perf_counter()
            client.gather(client.map(noop, range(tasks), pure=False))
            return tasks / (time.perf_counter() - t0)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pairs", type=int, default=5)
    ap.add_argument("--tasks", type=int, default=2000)
    ap.add_argument("--workers", type=int, default=2)
    args = ap.parse_args()
    a, b = [], []
    for i in range(args.pairs):
        order = (False, True) if i % 2 == 0 else (True, False)
        got = {tls: tasks_per_s(tls, args.tasks, args.workers) for tls in order}
        a.append(got[False])
        b.append(got[True])
        print(f"pair {i + 1}: plain {got[False]:8.0f}/s  TLS {got[True]:8.0f}/s  "
              f"B/A {got[True] / got[False]:.3f}", flush=True)  # fmt: skip
    logs = [math.log(y / x) for x, y in zip(a, b, strict=True)]
    _, lo, hi = paired_t(np.asarray(logs), 0.95)
    print(f"median tasks/s: plain {statistics.median(a):.0f}, TLS {statistics.median(b):.0f}")
    print(
        f"TLS/plain: {math.exp(statistics.mean(logs)):.3f} "
        f"(95% CI {math.exp(lo):.3f}–{math.exp(hi):.3f}, {args.pairs} pairs)"
    )


if __name__ == "__main__":
    main()
