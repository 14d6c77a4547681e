"""How long does one stage of a ``--runner parsl`` campaign take?  Two revisions, A/B.

    .venv/bin/python bench/runner_stage_ab.py --rev-a 549a05d --pairs 5 [-- --runs 2]

Each pair creates a small campaign (a black-box ``echo``, one factor, full design, ``--runs``
replicates) and times ``perflab campaign run --runner parsl`` from both revisions, in
alternating order, each imported from its own ``src`` through PYTHONPATH. The runner config
is a plain HTEX with two one-worker local blocks and Parsl's default strategy period, as a
user's would be. Printed: each pair's wall seconds and the ratio B/A (geometric mean, 95% t
interval of the log ratios).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from pairs import export, ratio_text, revisions

CONFIG = """
from parsl.config import Config
from parsl.executors import HighThroughputExecutor
from parsl.providers import LocalProvider

config = Config(
    executors=[HighThroughputExecutor(
        label="bench_runner", address="127.0.0.1", max_workers_per_node=1,
        provider=LocalProvider(init_blocks=2, min_blocks=2, max_blocks=2),
    )],
    strategy="none",
)
"""


def stage(src: Path, tmp: Path, name: str, runs: int) -> float:
    """Wall seconds of ``campaign run --runner parsl`` of a fresh campaign, from ``src``."""
    env = {**os.environ, "PYTHONPATH": str(src)}
    db = str(tmp / f"{name}.db")
    perflab = [sys.executable, "-m", "perflab", "campaign"]
    create = [*perflab, "create", name, "--command", "echo 5", "--factors", "a"]
    create += ["--design", "full", "--replicates", str(runs), "--store", db]
    subprocess.run(create, env=env, check=True, capture_output=True)
    run = [*perflab, "run", name, "--runner", "parsl", "--parsl-config", str(tmp / "cfg.py")]
    t0 = time.perf_counter()
    proc = subprocess.run([*run, "--store", db], env=env, capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"{src}: exit {proc.returncode}: {proc.stderr.strip()[-400:]}")
    return time.perf_counter() - t0


def main() -> None:
    ns, rest = revisions(__doc__ or "", 5)
    own = argparse.ArgumentParser(prog="-- (the stage's own arguments)")
    own.add_argument("--runs", type=int, default=2, help="replicates of each of the 2 sets")
    args = own.parse_args(rest)
    with tempfile.TemporaryDirectory(prefix="perflab-stage-") as name:
        tmp = Path(name)
        src = {"A": export(ns.rev_a, tmp / "a"), "B": export(ns.rev_b, tmp / "b")}
        (tmp / "cfg.py").write_text(CONFIG)
        print(f"load {os.getloadavg()[0]:.1f}")
        print(f"{'pair':>4} {'A s':>7} {'B s':>7}")
        walls: list[float] = []
        for i in range(ns.pairs):
            order = "AB" if i % 2 == 0 else "BA"
            got = {s: stage(src[s], tmp, f"c{i}{s}", args.runs) for s in order}
            walls.append(got["B"] / got["A"])
            print(f"{i + 1:>4} {got['A']:7.2f} {got['B']:7.2f}", flush=True)
        print(f"B/A stage wall: {ratio_text(walls)}")
        print(f"load {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
