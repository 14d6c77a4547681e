"""Does a change to perflab change what it measures?  Two revisions, one run command, A/B.

    .venv/bin/python bench/rate_ab.py --rev-a a3fe873~1 --pairs 8 -- \
        --target parsl-htex --workload noop --tasks 2000

A is the git revision ``--rev-a`` (``git archive`` into a temporary directory), B the working
tree (or ``--rev-b``); each pair runs ``perflab run ARGS --json`` from both, in alternating
order, each imported from its own ``src`` through PYTHONPATH. Printed: each pair's tasks/s,
and the ratio B/A of the counted window's tasks/s and of the whole command's wall time, as
geometric means with 95 % t intervals of the log ratios.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from pairs import export, ratio_text, revisions


def run(src: Path, args: list[str], root: str) -> tuple[float, float]:
    """(window tasks/s, command wall s) of one ``perflab run`` from ``src``."""
    env = {**os.environ, "PYTHONPATH": str(src)}
    t0 = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "perflab", "run", *args, "--run-root", root, "--json"],
        env=env,
        capture_output=True,
        text=True,
    )
    wall = time.perf_counter() - t0
    rec = json.loads(proc.stdout) if proc.stdout.strip() else {}
    if proc.returncode != 0 or rec.get("status") != "ok":
        raise SystemExit(f"{src}: exit {proc.returncode}: {rec.get('error') or proc.stderr}")
    return float(rec["tasks_per_s"]), wall


def main() -> None:
    ns, args = revisions(__doc__ or "", 8)
    with tempfile.TemporaryDirectory(prefix="perflab-rate-") as tmp:
        src = {"A": export(ns.rev_a, Path(tmp, "a")), "B": export(ns.rev_b, Path(tmp, "b"))}
        root = Path(tmp, "runs")
        root.mkdir(mode=0o700)
        rates: list[float] = []
        walls: list[float] = []
        print(f"load {os.getloadavg()[0]:.1f}")
        print(f"{'pair':>4} {'A tasks/s':>10} {'B tasks/s':>10} {'A wall':>7} {'B wall':>7}")
        for i in range(ns.pairs):
            got = {s: run(src[s], args, str(root)) for s in ("AB" if i % 2 == 0 else "BA")}
            (ra, wa), (rb, wb) = got["A"], got["B"]
            rates.append(rb / ra)
            walls.append(wb / wa)
            print(f"{i + 1:>4} {ra:10.1f} {rb:10.1f} {wa:7.2f} {wb:7.2f}", flush=True)
        print(f"B/A window tasks/s: {ratio_text(rates)}; B/A command wall: {ratio_text(walls)}")
        print(f"load {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
