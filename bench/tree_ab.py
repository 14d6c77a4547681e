"""Whole-command wall time of one perflab CLI command from two versions of perflab, A/B.

    .venv/bin/python bench/tree_ab.py --rev-a 9e8489d~1 --pairs 6 -- run --tasks 1000

A is the git revision ``--rev-a`` (exported with ``git archive`` into a temporary directory),
B the working tree (or ``--rev-b``). The command runs with the same interpreter, each side
imported from its own ``src`` through PYTHONPATH, in ABBA order, each in a fresh process.
It prints every pair's B/A ratio of wall time and of the children's CPU time, then the
geometric mean ratio with a 95 % t interval over the pairs (ratios within one interleaved
stream are what hold on a noisy machine; absolute times are printed for reference only).
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from pairs import export, ratio_text, revisions


def timed(src: Path, args: list[str]) -> tuple[float, float]:
    """(wall s, children's CPU s) of one run of ``python -m perflab ARGS`` from ``src``."""
    env = {**os.environ, "PYTHONPATH": str(src)}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "perflab", *args], env=env, capture_output=True, text=True
    )
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise SystemExit(f"{src}: perflab {' '.join(args)} exit {proc.returncode}: {proc.stderr}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def main() -> None:
    ns, args = revisions(__doc__ or "", 6)
    with tempfile.TemporaryDirectory() as tmp:
        src_a, src_b = export(ns.rev_a, Path(tmp, "a")), export(ns.rev_b, Path(tmp, "b"))
        timed(src_a, args)  # warm-up: file caches, bytecode
        walls: list[float] = []
        cpus: list[float] = []
        print(f"{'pair':>4} {'A wall':>7} {'B wall':>7} {'B/A wall':>8} {'B/A cpu':>8}")
        for i in range(ns.pairs):
            order = "AB" if i % 2 == 0 else "BA"
            got = {side: timed(src_a if side == "A" else src_b, args) for side in order}
            (wa, ca), (wb, cb) = got["A"], got["B"]
            walls.append(wb / wa)
            cpus.append(cb / ca)
            print(f"{i + 1:>4} {wa:7.2f} {wb:7.2f} {wb / wa:8.3f} {cb / ca:8.3f}", flush=True)
        print(f"B/A wall: {ratio_text(walls)}; B/A CPU: {ratio_text(cpus)}; {ns.pairs} pairs")


if __name__ == "__main__":
    main()
