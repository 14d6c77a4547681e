"""Does perflab's harness slow the engine down?  parsl-perf vs ``perflab run``, A/B interleaved.

Both sides load the same HTEX config file and size their batch with the same estimate rule.
Each pair runs both sides back to back, in alternating order (ABBA...), so drift of a shared
machine spreads over both. Prints each pair, each side's median tasks/s and coefficient of
variation, and the ratio perflab / parsl-perf: the geometric mean of the per-pair ratios with
a 95% confidence interval from the t distribution of the log ratios (and a percentile
bootstrap as a check). Goal: the CI lies above 0.98, or includes 1.0 with width <= 0.06.

    .venv/bin/python bench/parsl_perf_ab.py [--pairs 12] [--time 5] [--out pairs.jsonl]
        [--until-width 0.06 --max-pairs 100]

``--out`` appends each pair as a JSON line and a rerun resumes from it, so a long measurement
survives a stop. ``--until-width`` keeps adding pairs past ``--pairs`` until the CI is that
narrow (or ``--max-pairs``): stopping on the interval's width, never on its position, keeps
the interval's coverage.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

from perflab.analysis.stats import t_ppf

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
    cmd = [sys.executable, "-m", "perflab", "run", "--parsl-config", str(cfg)]
    cmd += ["--time", str(seconds), "--json", "--run-root", str(cwd / "runs")]
    out = subprocess.run(cmd, capture_output=True, text=True, cwd=cwd, check=True, env=ENV)
    rec = json.loads(out.stdout)
    assert rec["status"] == "ok", rec["error"]
    return float(rec["tasks_per_s"])


def cv(xs: list[float]) -> float:
    return statistics.stdev(xs) / statistics.fmean(xs)


def ratio_ci(a: list[float], b: list[float]) -> tuple[float, float, float, float, float]:
    """Geometric mean of b/a per pair with its 95% t interval; and a bootstrap interval."""
    logs = np.log(np.array(b) / np.array(a))
    n = len(logs)
    mean, se = float(logs.mean()), float(logs.std(ddof=1) / math.sqrt(n))
    q = float(t_ppf(0.975, n - 1))
    rng = np.random.default_rng(0)
    boot = np.array([logs[rng.integers(0, n, n)].mean() for _ in range(10_000)])
    lo_b, hi_b = np.percentile(boot, [2.5, 97.5])
    return (
        math.exp(mean),
        math.exp(mean - q * se),
        math.exp(mean + q * se),
        math.exp(float(lo_b)),
        math.exp(float(hi_b)),
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pairs", type=int, default=12)
    ap.add_argument("--time", type=float, default=5.0)
    ap.add_argument("--out", type=Path, help="append pairs here (JSON lines); resume from it")
    ap.add_argument("--until-width", type=float, help="add pairs until the CI is this narrow")
    ap.add_argument("--max-pairs", type=int, default=100)
    args = ap.parse_args()
    a: list[float] = []
    b: list[float] = []
    if args.out and args.out.exists():
        for line in args.out.read_text().splitlines():
            rec = json.loads(line)
            a.append(rec["parsl_perf"])
            b.append(rec["perflab"])
        print(f"resumed {len(a)} pairs from {args.out}")

    def more() -> bool:
        if len(a) < args.pairs:
            return True
        if args.until_width is None or len(a) >= args.max_pairs:
            return False
        _, lo, hi, _, _ = ratio_ci(a, b)
        return hi - lo > args.until_width

    with tempfile.TemporaryDirectory() as d:
        work = Path(d)
        cfg = work / "htex_local.py"
        cfg.write_text(CONFIG)
        print(f"{'pair':>4} {'parsl-perf':>12} {'perflab':>12} {'ratio':>7}  (tasks/s)")
        while more():
            i = len(a)
            # alternate which side goes first, so neither always runs on a warmer machine
            if i % 2 == 0:
                a.append(parsl_perf(cfg, args.time, work))
                b.append(perflab(cfg, args.time, work))
            else:
                b.append(perflab(cfg, args.time, work))
                a.append(parsl_perf(cfg, args.time, work))
            print(f"{i + 1:>4} {a[-1]:>12.1f} {b[-1]:>12.1f} {b[-1] / a[-1]:>7.3f}", flush=True)
            if args.out:
                with args.out.open("a") as f:
                    f.write(json.dumps({"parsl_perf": a[-1], "perflab": b[-1]}) + "\n")
    g, lo, hi, blo, bhi = ratio_ci(a, b)
    ma, mb = statistics.median(a), statistics.median(b)
    print(f"median  parsl-perf {ma:.1f} (CV {cv(a):.1%})  perflab {mb:.1f} (CV {cv(b):.1%})")
    print(
        f"ratio perflab/parsl-perf (geometric mean of {len(a)} pairs) = {g:.3f}, "
        f"95% CI {lo:.3f} .. {hi:.3f} (t on log ratios; bootstrap {blo:.3f} .. {bhi:.3f}); "
        f"width {hi - lo:.3f}"
    )
    met = lo > 0.98 or (lo <= 1.0 <= hi and hi - lo <= 0.06)
    print(
        f"goal (CI above 0.98, or containing 1.0 with width <= 0.06): {'met' if met else 'not met'}"
    )
    print(f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f} at the end")


if __name__ == "__main__":
    main()
