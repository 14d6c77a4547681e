"""Does perflab's harness slow the engine down?  parsl-perf vs ``perflab run``, A/B interleaved.

Both sides load the same HTEX config file and size their batch with the same estimate rule.
Prints each pair, each side's median tasks/s and coefficient of variation, and the ratio
perflab / parsl-perf of the medians (goal: >= 0.98).

    .venv/bin/python bench/parsl_perf_ab.py [--pairs 5] [--time 5]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

CONFIG = """
import os
from parsl.config import Config
from parsl.executors import HighThroughputExecutor
from parsl.providers import LocalProvider

config = Config(
    executors=[HighThroughputExecutor(
        label="htex", address="127.0.0.1", max_workers_per_node=os.cpu_count(),
        provider=LocalProvider(init_blocks=1, min_blocks=1, max_blocks=1),
    )],
    strategy="none",
    usage_tracking=0,
)
"""

BIN = Path(sys.executable).parent
# Parsl finds interchange.py and process_worker_pool.py on PATH, as in an activated venv.
ENV = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"}


def parsl_perf(cfg: Path, seconds: float, cwd: Path) -> float:
    out = subprocess.run(
        [str(BIN / "parsl-perf"), "--config", str(cfg), "--time", str(seconds)],
        capture_output=True,
        text=True,
        cwd=cwd,
        check=True,
        env=ENV,
    ).stdout
    return float(re.findall(r"Tasks per second: ([0-9.]+)", out)[-1])


def perflab(cfg: Path, seconds: float, cwd: Path) -> float:
    out = subprocess.run(
        [
            str(BIN / "perflab"),
            "run",
            "--parsl-config",
            str(cfg),
            "--time",
            str(seconds),
            "--json",
            "--run-root",
            str(cwd / "runs"),
        ],
        capture_output=True,
        text=True,
        cwd=cwd,
        check=True,
        env=ENV,
    ).stdout
    rec = json.loads(out)
    assert rec["status"] == "ok", rec["error"]
    return float(rec["tasks_per_s"])


def cv(xs: list[float]) -> float:
    return statistics.stdev(xs) / statistics.fmean(xs)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pairs", type=int, default=5)
    ap.add_argument("--time", type=float, default=5.0)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        work = Path(d)
        cfg = work / "htex_local.py"
        cfg.write_text(CONFIG)
        a: list[float] = []
        b: list[float] = []
        print(f"{'pair':>4} {'parsl-perf':>12} {'perflab':>12}  (tasks/s, {os.cpu_count()} cores)")
        for i in range(args.pairs):
            a.append(parsl_perf(cfg, args.time, work))
            b.append(perflab(cfg, args.time, work))
            print(f"{i + 1:>4} {a[-1]:>12.1f} {b[-1]:>12.1f}", flush=True)
        ma, mb = statistics.median(a), statistics.median(b)
        print(f"median  parsl-perf {ma:.1f} (CV {cv(a):.1%})  perflab {mb:.1f} (CV {cv(b):.1%})")
        print(f"ratio perflab/parsl-perf = {mb / ma:.3f}  (goal >= 0.98)")


if __name__ == "__main__":
    main()
