"""What the network relay costs by itself: HTEX noop with the pools connected to the
interchange directly (A) and through perflab's relay with no delay, ``net_rtt_ms=0`` (B).

    .venv/bin/python bench/net_relay_ab.py [--pairs 8] [--tasks 3000] [--workers 2]
        [--prefetch 0] [--rtt 0]

Each run is a full perflab run (fresh interchange, pools and relay). A and B alternate in
pairs, the order within a pair random, so slow drift of the machine falls on both. Prints
each pair, then B/A for tasks/s and for the tree's CPU seconds per task: the geometric mean
over pairs with a 95% t-interval on the per-pair log ratios (scipy). A pair with a failed
run is reported and left out. ``--rtt`` times a delayed relay against the direct link instead.
"""

from __future__ import annotations

import argparse
import os
import random

from perflab.compare.stats import paired_ratio
from perflab.factors.catalog import load_catalogs
from perflab.factors.treat import treat
from perflab.run.measure import measure
from perflab.run.record import RunRecord
from perflab.spec import RunSpec


def cpu_per_task(rec: RunRecord) -> float:
    assert rec.cpu_user_s is not None and rec.cpu_sys_s is not None and rec.tasks
    return (rec.cpu_user_s + rec.cpu_sys_s) / rec.tasks


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--pairs", type=int, default=8)
    ap.add_argument("--tasks", type=int, default=3000)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--prefetch", type=int, default=0)
    ap.add_argument("--rtt", type=float, default=0.0, help="B's net_rtt_ms (default 0)")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    opts = {"workers": args.workers, "prefetch_capacity": args.prefetch}
    direct = RunSpec(target="parsl-htex", workload="noop", tasks=args.tasks, warmup=200,
                     engine_options=opts)  # fmt: skip
    relay = treat(direct, f"net_rtt_ms={args.rtt:g}", load_catalogs())
    print(f"load average before: {os.getloadavg()[0]:.2f}", flush=True)
    rates: list[float] = []
    cpus: list[float] = []
    for i in range(args.pairs):
        arms = [("A", direct), ("B", relay)]
        rng.shuffle(arms)
        got = {name: measure(spec) for name, spec in arms}
        a, b = got["A"], got["B"]
        if a.status != "ok" or b.status != "ok":
            print(f"pair {i + 1}: left out (A {a.status}, B {b.status}: {a.error or b.error})")
            continue
        assert a.tasks_per_s and b.tasks_per_s
        assert b.env["net"]["mechanism"] == "relay" and a.env["net"]["mechanism"] == "direct"
        rates.append(b.tasks_per_s / a.tasks_per_s)
        cpus.append(cpu_per_task(b) / cpu_per_task(a))
        print(
            f"pair {i + 1} ({arms[0][0]} first): direct {a.tasks_per_s:7.0f}/s  relay "
            f"{b.tasks_per_s:7.0f}/s  B/A {rates[-1]:.3f}  CPU/task B/A {cpus[-1]:.3f}  "
            f"load {os.getloadavg()[0]:.2f}",
            flush=True,
        )
    if not rates:
        raise SystemExit("no pair completed")
    for what, ratios in (("tasks/s", rates), ("CPU s/task", cpus)):
        g, lo, hi = paired_ratio(ratios)
        print(f"relay(rtt {args.rtt:g} ms)/direct {what}: {g:.3f} "
              f"(95% CI {lo:.3f}-{hi:.3f}, {len(ratios)} pairs)")  # fmt: skip
    print(f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
