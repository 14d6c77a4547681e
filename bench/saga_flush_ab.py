"""What radical.saga's 0.1 s flush wait costs: interleaved pairs of saga fork:// create_job
runs, untreated vs ``src_saga_flush_nowait``, in one sitting.

    python bench/saga_flush_ab.py [--pairs 6] [--jobs 40] [--endpoint fork]

Both arms carry ``--base`` (default ``src_saga_wrapper_fifo``: without saga's flush wait, the
shell wrapper's fifo race makes submissions fail), so the pair differs in the flush patch only.
Prints each pair's jobs/s and the ratio patched/untreated: the geometric mean over pairs
with a 95% t-interval on the log ratios (pairs are the unit, so slow drift of the machine
cancels within a pair). The order within each pair is random; a pair with a failed run is
reported and left out.
"""

from __future__ import annotations

import argparse
import math
import random
import statistics

from perflab.analysis.stats import t_ppf
from perflab.factors.catalog import load_catalogs
from perflab.factors.treat import treat
from perflab.run.measure import measure
from perflab.spec import RunSpec

FACTOR = "src_saga_flush_nowait"


def ratio_interval(ratios: list[float], level: float = 0.95) -> tuple[float, float, float]:
    """Geometric mean of ``ratios`` and its t-interval (computed on the log scale)."""
    logs = [math.log(r) for r in ratios]
    mean = statistics.fmean(logs)
    if len(logs) < 2:
        return math.exp(mean), math.nan, math.nan
    half = t_ppf(0.5 + level / 2, len(logs) - 1) * statistics.stdev(logs) / math.sqrt(len(logs))
    return math.exp(mean), math.exp(mean - half), math.exp(mean + half)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pairs", type=int, default=6)
    ap.add_argument("--jobs", type=int, default=40)
    ap.add_argument("--endpoint", default="fork", choices=["fork", "ssh"])
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--base", default="src_saga_wrapper_fifo", help="treatments of both arms")
    a = ap.parse_args()
    base = RunSpec(
        target="saga",
        workload="noop",
        tasks=a.jobs,
        warmup=3,
        engine_options={"endpoint": a.endpoint, "mode": "create_job"},
        timeout_s=600,
    )
    catalog = load_catalogs()
    patched = treat(base, [*a.base.split(","), FACTOR], catalog)
    base = treat(base, a.base, catalog)
    rng = random.Random(a.seed)
    ratios = []
    for i in range(a.pairs):
        order = [("untreated", base), ("patched", patched)]
        rng.shuffle(order)
        rates = {}
        for label, spec in order:
            rec = measure(spec)
            if rec.status != "ok":
                last = (rec.error or "").strip().splitlines()[-1:]
                print(f"pair {i + 1}: {label} run failed: {last}", flush=True)
                break
            rates[label] = float(rec.tasks_per_s or 0)
        if len(rates) < 2:
            continue
        ratios.append(rates["patched"] / rates["untreated"])
        print(
            f"pair {i + 1}: untreated {rates['untreated']:.2f} jobs/s, "
            f"patched {rates['patched']:.2f} jobs/s, ratio {ratios[-1]:.2f}",
            flush=True,
        )
    gm, lo, hi = ratio_interval(ratios)
    print(
        f"patched / untreated jobs/s: {gm:.2f}x (95% CI {lo:.2f}-{hi:.2f}, "
        f"{len(ratios)} of {a.pairs} pairs; both arms: {a.base or 'untreated'})"
    )


if __name__ == "__main__":
    main()
