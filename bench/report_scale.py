"""Report generation at the seed's scale: 15,000 runs x 20 factors (goal <= 10 s).

    .venv/bin/python bench/report_scale.py [--runs 15000] [--factors 20] [--jobs 1,2]

Prints the time (wall and CPU) of ``perflab report`` end to end (``report_source``: parse,
analyse, draw every figure as PNG and SVG, write report.html) for each number of figure
workers, then where the time goes: the analysis, and each figure (drawn once, in this
process).
"""

from __future__ import annotations

import argparse
import os
import resource
import tempfile
import time
import warnings
from pathlib import Path

from perflab.analysis import synthetic
from perflab.campaign.source import open_source
from perflab.report.context import build
from perflab.report.figures import FIGURES
from perflab.report.html import report_source
from perflab.report.render import JOBS_ENV, draw


def _cpu() -> float:
    """CPU seconds of this process and its finished workers (wall time on a shared machine
    is mostly waiting for a core)."""
    me = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=15000)
    ap.add_argument("--factors", type=int, default=20)
    ap.add_argument("--jobs", default="1,2", help="figure workers to compare")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        csv = Path(d) / "seed_scale.csv"
        synthetic.generate(
            args.runs, k=args.factors, seed=1, design="sequences", replicates=3
        ).to_csv(csv, sep=";", index=False)
        for jobs in args.jobs.split(","):
            os.environ[JOBS_ENV] = jobs
            t0, c0 = time.perf_counter(), _cpu()
            html = report_source(str(csv), None, Path(d) / f"report{jobs}")
            dt, cpu = time.perf_counter() - t0, _cpu() - c0
            figures = len(list((html.parent / "figures").glob("*.png")))
            print(
                f"report of {args.runs:,} runs x {args.factors} factors, {jobs} figure "
                f"worker(s): {dt:.1f} s ({cpu:.1f} s CPU), {figures} figures (PNG+SVG), "
                f"report.html {html.stat().st_size / 2**20:.1f} MiB (goal <= 10 s; load "
                f"{os.getloadavg()[0]:.1f})",
                flush=True,
            )
        t0 = time.perf_counter()
        src = open_source(str(csv))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ctx = build(src.dataset(), src.runs)
        print(f"  parse + analysis (incl. any 'without' view): {time.perf_counter() - t0:.1f} s")
        times = []
        out = Path(d) / "one"
        out.mkdir()
        for name in FIGURES:
            t0 = time.perf_counter()
            if draw(ctx, name, out) is not None:
                times.append((time.perf_counter() - t0, name))
        total = sum(t for t, _ in times)
        top = ", ".join(f"{n} {t:.1f} s" for t, n in sorted(times, reverse=True)[:5])
        print(f"  figures one by one: {total:.1f} s; slowest: {top}")
    print(f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f} at the end")


if __name__ == "__main__":
    main()
