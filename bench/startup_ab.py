"""Start-up treatments for the import of Parsl's worker pool: file calls and time, A/B.

    PYTHONPATH=src python bench/startup_ab.py [--pairs 8]

For each treatment: file-system calls of one ``python -c 'import <module>'`` (strace, whole
tree) and its wall and CPU time over interleaved pairs with the untreated start (no strace).
Prints ratios within this run only; on a shared machine the times are noisy (say so).
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from perflab.factors.bundle import bundle_dir
from perflab.profile.strace import iter_file_calls, parse_file, strace_prefix

MODULE = "parsl.executors.high_throughput.process_worker_pool"


def calls(env: dict[str, str], argv: list[str]) -> tuple[int, int]:
    """(all file calls, path lookups) of one start."""
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "t")
        subprocess.run([*strace_prefix(out), *argv], env=env, check=True)
        got = [cls for _, cls, _ in iter_file_calls(parse_file(out))]
    return len(got), sum(1 for c in got if c != "fstat")


def timed(env: dict[str, str], argv: list[str]) -> tuple[float, float]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run(argv, env=env, check=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--pairs", type=int, default=8)
    ap.add_argument("--module", default=MODULE)
    args = ap.parse_args()
    py = sys.executable
    base_env = dict(os.environ)
    home = Path(tempfile.mkdtemp(prefix="perflab-bundle-"))
    extra = [str(home / f"extra{i}") for i in range(20)]
    for d in extra:
        os.makedirs(d)
    bundle = bundle_dir(py, [args.module], home / "bundle", base_env)
    pp = base_env.get("PYTHONPATH", "")
    arms = {
        "untreated": (base_env, [py, "-c", f"import {args.module}"]),
        "-I (isolated)": (base_env, [py, "-I", "-c", f"import {args.module}"]),
        "bundle": (
            {**base_env, "PYTHONPATH": f"{bundle}:{pp}"},
            [py, "-c", f"import {args.module}"],
        ),
        "20 extra path dirs": (
            {**base_env, "PYTHONPATH": ":".join([*extra, pp])},
            [py, "-c", f"import {args.module}"],
        ),
        "20 extra + bundle": (
            {**base_env, "PYTHONPATH": ":".join([str(bundle), *extra, pp])},
            [py, "-c", f"import {args.module}"],
        ),
    }
    counts = {name: calls(env, argv) for name, (env, argv) in arms.items()}
    base = counts["untreated"]
    print(f"file calls per start of `import {args.module}` (all / path lookups):")
    for name, (n, lookups) in counts.items():
        cut = f"{base[0] / n:5.2f}× / {base[1] / lookups:5.2f}×"
        print(f"  {name:20s} {n:6d} / {lookups:6d}   cut {cut}")
    times: dict[str, list[tuple[float, float]]] = {"untreated": [], "bundle": []}
    for i in range(args.pairs):
        order = ["untreated", "bundle"] if i % 2 == 0 else ["bundle", "untreated"]
        for name in order:
            times[name].append(timed(*arms[name]))
    print(f"start-up time, {args.pairs} interleaved pairs (median wall / CPU):")
    for name, v in times.items():
        w, c = statistics.median(x[0] for x in v), statistics.median(x[1] for x in v)
        print(f"  {name:10s} wall {w:.3f} s   cpu {c:.3f} s")
    ratios = [b[0] / a[0] for a, b in zip(times["untreated"], times["bundle"], strict=True)]
    print(
        f"  bundle/untreated wall ratio: median {statistics.median(ratios):.2f} "
        f"(pairs {min(ratios):.2f}–{max(ratios):.2f}); load {os.getloadavg()[0]:.1f}"
    )


if __name__ == "__main__":
    main()
