"""Repeat one ``perflab compare`` N times and tally its verdicts (the gate's error rates).

    .venv/bin/python bench/compare_verdicts.py OUT.jsonl --count 20 -- --tasks 1000
    .venv/bin/python bench/compare_verdicts.py noop.jsonl --count 10 -- --tasks 1000 \
        --treat-b cfg_noop_logging
    .venv/bin/python bench/compare_verdicts.py inject.jsonl --count 10 -- --tasks 1000 \
        --catalog bench/compare/inject.toml --treat-b inject_slowdown=100

Everything after ``--`` is passed to ``perflab compare`` as it is (its own defaults apply:
α 1 %, threshold 5 %, runs per side from the stored calibration). Each comparison is a fresh
``perflab compare --json`` process, so the path measured is the one a CI job runs. Results are
appended to OUT.jsonl as they finish: a stopped bench resumes where it was. The summary is
the count of each verdict with an exact (Clopper–Pearson) 95 % interval on the share of
"different" verdicts (faster or slower), and each comparison's ratio and CI.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

from perflab.analysis.stats import clopper_pearson

PERFLAB = [sys.executable, "-m", "perflab"]


def run_one(args: list[str]) -> dict[str, object]:
    t0 = time.perf_counter()
    proc = subprocess.run([*PERFLAB, "compare", *args, "--json"], capture_output=True, text=True)
    took = time.perf_counter() - t0
    lines = proc.stdout.strip().splitlines()
    if proc.returncode not in (0, 1) or not lines:
        raise SystemExit(f"perflab compare failed (exit {proc.returncode}): {proc.stderr[-2000:]}")
    out = json.loads(lines[-1])
    out["_exit"] = proc.returncode
    out["_seconds"] = took
    return out


def summarise(rows: list[dict[str, object]]) -> None:
    verdicts: dict[str, int] = {}
    print(
        f"{'#':>3} {'verdict':<13} {'B/A':>7} {'CI low':>7} {'CI high':>7} {'p':>9} "
        f"{'n/side':>6} {'s':>6}"
    )
    for i, r in enumerate(rows, 1):
        d = r["decision"] or {}
        assert isinstance(d, dict)
        v = str(r["verdict"])
        verdicts[v] = verdicts.get(v, 0) + 1
        n = r["a"]["n"]  # type: ignore[index]
        print(
            f"{i:>3} {v:<13} {d.get('ratio', float('nan')):7.3f} "
            f"{d.get('ci_low', float('nan')):7.3f} {d.get('ci_high', float('nan')):7.3f} "
            f"{d.get('p_value', float('nan')):9.2g} {n:>6} {r['_seconds']:6.0f}"
        )
    total = len(rows)
    different = verdicts.get("faster", 0) + verdicts.get("slower", 0)
    ci = clopper_pearson(different, total) if total else None
    print("verdicts:", ", ".join(f"{k} {v}" for k, v in sorted(verdicts.items())))
    if ci is not None:
        print(
            f"'different' (faster or slower): {different}/{total} (95 % CI {ci[0]:.2f}-{ci[1]:.2f})"
        )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("out", type=Path, help="JSON lines file (appended; resumes)")
    ap.add_argument("--count", type=int, default=10)
    argv = sys.argv[1:]
    cut = argv.index("--") if "--" in argv else len(argv)
    ns = ap.parse_args(argv[:cut])
    args = argv[cut + 1 :]
    rows = [json.loads(x) for x in ns.out.read_text().splitlines()] if ns.out.exists() else []
    while len(rows) < ns.count:
        row = run_one(args)
        rows.append(row)
        with ns.out.open("a") as f:
            f.write(json.dumps(row) + "\n")
        d = row["decision"] or {}
        print(
            f"[{len(rows)}/{ns.count}] {row['verdict']} ratio {d.get('ratio')} "  # type: ignore[union-attr]
            f"({row['_seconds']:.0f} s)",
            flush=True,
        )
    summarise(rows[: ns.count])


if __name__ == "__main__":
    main()
