"""The synthetic bisection on a busy node: `perflab bisect --precision` on a real command
over the tests' own repository, with CPU-bound co-runners.

    PYTHONPATH=src:tests/bisect python bench/bisect_busy.py [--seeds 10] [--co-runners 1]
        [--precision 0.03] [--commits 41] [--max-time 600] [--isolate]
        [--out bench/out/bisect_busy.json]

Each seed makes the repository of ``tests/bisect/toyrepo.py`` (``--commits`` commits of the
package ``toybis``) with two slow commits planted at seeded places, +20 % and +10 % on the
cost of ``toybis.work()``, and runs, as a user would::

    perflab bisect --package toybis --repo R --range FIRST..LAST --build tree \\
        --command "python3 -c 'import toybis; toybis.work(N)'" --precision 3% --json

with a fresh perflab home (so each seed pilots the command itself). The metric is the
command's wall time, measured by perflab. ``--co-runners K`` starts K ``python3 -c 'while
1: pass'`` for the whole bench (stopped by PID at the end, also on Ctrl-C); 0 is the quiet
machine's reference. Printed per seed: the culprits named against the planted ones, the
runs, the minutes and the load the runs recorded; then how often both planted commits were
named and how often a false one was, with Wilson intervals.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from toyrepo import make_repo

from perflab.analysis.stats import wilson_ci

COMMAND = "python3 -c 'import toybis; toybis.work({n})'"


def co_runners(k: int) -> list[subprocess.Popen[bytes]]:
    """K CPU-bound processes at the default priority (the measured runs' own)."""
    return [subprocess.Popen([sys.executable, "-c", "while 1: pass"]) for _ in range(k)]


def one_seed(seed: int, ns: argparse.Namespace, root: Path) -> dict[str, Any]:
    n = ns.commits
    i, j = sorted(random.Random(seed).sample(range(1, n), 2))
    slow = {i: 1.20, j: 1.10} if seed % 2 == 0 else {i: 1.10, j: 1.20}
    repo = root / f"seed{seed}" / "repo"
    shas = make_repo(repo, n=n, planted=slow)
    home = root / f"seed{seed}" / "home"
    home.mkdir(mode=0o700)
    args = [
        sys.executable, "-m", "perflab", "bisect", "--package", "toybis", "--repo", str(repo),
        "--range", f"{shas[0]}..{shas[-1]}", "--build", "tree",
        "--command", COMMAND.format(n=ns.work), "--precision", f"{ns.precision:.1%}",
        "--max-time", str(ns.max_time), "--json", *(["--isolate"] if ns.isolate else []),
    ]  # fmt: skip
    env = {**os.environ, "PERFLAB_HOME": str(home)}
    t0 = time.monotonic()
    res = subprocess.run(args, capture_output=True, text=True, env=env, cwd=root)
    minutes = (time.monotonic() - t0) / 60
    row: dict[str, Any] = {"seed": seed, "planted": {shas[k]: f for k, f in slow.items()},
                           "planted_at": sorted(slow), "exit": res.returncode,
                           "minutes": minutes}  # fmt: skip
    if res.returncode != 0 or not res.stdout.strip():
        row["error"] = res.stderr.strip().splitlines()[-1:] or ["(no output)"]
        return row
    out = json.loads(res.stdout)
    named = [c["key"] for s in out.get("stages", []) for c in s.get("culprits", [])]
    row["named_at"] = sorted(shas.index(k) for k in named if k in shas)
    row["outcomes"] = [s.get("outcome") for s in out.get("stages", [])]
    row["runs"] = out.get("runs") or sum(s.get("runs", 0) for s in out.get("stages", []))
    row["load"] = out.get("load")
    row["found_both"] = set(slow) <= set(row["named_at"])
    row["false"] = bool(set(row["named_at"]) - set(slow))
    return row


def wilson(k: int, n: int) -> str:
    lo, hi = wilson_ci(k, n) if n else (0.0, 1.0)
    return f"{k} of {n} ({lo:.2f}–{hi:.2f})"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--first-seed", type=int, default=0)
    ap.add_argument("--co-runners", type=int, default=1)
    ap.add_argument("--precision", type=float, default=0.03)
    ap.add_argument("--commits", type=int, default=41)
    ap.add_argument("--work", type=int, default=1_000_000, help="toybis.work(N): its loop")
    ap.add_argument("--max-time", type=float, default=600.0)
    ap.add_argument("--isolate", action="store_true", help="bisect --isolate (needs root)")
    ap.add_argument("--out", default="bench/out/bisect_busy.json")
    ns = ap.parse_args()
    root = Path(tempfile.mkdtemp(prefix="perflab-bisect-busy-"))
    procs = co_runners(ns.co_runners)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))
    rows: list[dict[str, Any]] = []
    try:
        print(f"{ns.co_runners} co-runner(s) on {os.cpu_count()} cores; --precision "
              f"{ns.precision:.0%}; {ns.commits} commits", flush=True)  # fmt: skip
        print("| seed | planted at | named at | runs | min | load (1-min) |")
        print("|---|---|---|---|---|---|")
        for seed in range(ns.first_seed, ns.first_seed + ns.seeds):
            row = one_seed(seed, ns, root)
            rows.append(row)
            load = (row.get("load") or {}).get("loadavg_1m")
            print(f"| {seed} | {row['planted_at']} | {row.get('named_at', row.get('error'))} | "
                  f"{row.get('runs', '')} | {row['minutes']:.1f} | "
                  f"{'' if load is None else f'{load:.1f}'} |", flush=True)  # fmt: skip
    finally:
        for p in procs:
            p.kill()
            p.wait()
    done = [r for r in rows if "found_both" in r]
    print(f"both planted commits named: {wilson(sum(r['found_both'] for r in done), len(rows))}")
    print(f"a false culprit named: {wilson(sum(r['false'] for r in done), len(rows))}")
    print(
        f"runs per seed: {sum(r['runs'] for r in done) / max(len(done), 1):.0f}; "
        f"minutes per seed: {sum(r['minutes'] for r in rows) / max(len(rows), 1):.1f}"
    )
    Path(ns.out).parent.mkdir(parents=True, exist_ok=True)
    Path(ns.out).write_text(json.dumps({"args": vars(ns), "rows": rows}, indent=1))
    print(f"written {ns.out}")


if __name__ == "__main__":
    main()
