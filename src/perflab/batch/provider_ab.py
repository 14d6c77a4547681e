"""HTEX measured with its workers from Slurm against the same HTEX with a LocalProvider.

Both configs come from one template that differs only in the ``provider=`` line, so "same
config otherwise" holds by construction. Runs alternate in pairs (LS, SL, LS, …) so that a
drift of the machine's load hits both sides alike; the answer is each side's tasks/s with a
Student-t 95% interval and the ratio Slurm/Local as the geometric mean of the per-pair
ratios with its t interval (on the logs). The batch start-up (sbatch, the queue, the pool's
start in the job) ends before the warm-up batch does, outside the counted window.

    python -m perflab.batch.provider_ab --pairs 6 --tasks 3000   # starts a throwaway Slurm
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
from pathlib import Path
from typing import Any

from perflab import files
from perflab.analysis.stats import mean_ci

TEMPLATE = """
from parsl.config import Config
from parsl.executors import HighThroughputExecutor
from parsl.launchers import SrunLauncher
from parsl.providers import LocalProvider, SlurmProvider


def fresh_config():
    return Config(
        executors=[HighThroughputExecutor(
            label="htex", address="127.0.0.1", max_workers_per_node={workers},
            encrypted=True,
            provider={provider},
        )],
        strategy="none",
    )
"""

PROVIDERS = {
    "local": "LocalProvider(init_blocks=1, min_blocks=0, max_blocks=1)",
    "slurm": (
        "SlurmProvider(partition={partition!r}, nodes_per_block=1, init_blocks=1, "
        "min_blocks=0, max_blocks=1, exclusive=True, walltime='00:10:00', "
        "launcher=SrunLauncher())"
    ),
}


def write_configs(where: Path, partition: str, workers: int) -> dict[str, Path]:
    """The two Parsl configs (``local``, ``slurm``), identical but for the provider."""
    out = {}
    for side, provider in PROVIDERS.items():
        text = TEMPLATE.format(workers=workers, provider=provider.format(partition=partition))
        path = where / f"htex_{side}.py"
        path.unlink(missing_ok=True)
        files.create_private(path, text)
        out[side] = path
    return out


def t_interval(values: list[float]) -> tuple[float, float, float]:
    """Mean and Student-t 95% interval (NaN bounds from one value: JSON-friendly floats)."""
    mean, lo, hi = mean_ci(values)
    return mean, math.nan if lo is None else lo, math.nan if hi is None else hi


def provider_ab(configs: dict[str, Path], pairs: int, tasks: int, run_root: Path) -> dict[str, Any]:
    """Measure ``pairs`` interleaved pairs; each side's tasks/s and the ratio with CIs."""
    from perflab.run.measure import measure
    from perflab.spec import RunSpec

    rates: dict[str, list[float]] = {"local": [], "slurm": []}
    load = [os.getloadavg()[0]]
    for i in range(pairs):
        order = ("local", "slurm") if i % 2 == 0 else ("slurm", "local")
        for side in order:
            spec = RunSpec(target="parsl-htex", workload="noop", tasks=tasks,
                           parsl_config=str(configs[side]), run_root=str(run_root))  # fmt: skip
            rec = measure(spec)
            if rec.status != "ok" or not rec.tasks_per_s:
                raise RuntimeError(f"{side} run failed: {rec.error}")
            rates[side].append(float(rec.tasks_per_s))
            print(f"pair {i + 1} {side}: {rec.tasks_per_s:,.0f} tasks/s", file=sys.stderr)
        load.append(os.getloadavg()[0])
    logs = [math.log(s / lo) for s, lo in zip(rates["slurm"], rates["local"], strict=True)]
    m, lo, hi = t_interval(logs)
    return {
        "pairs": pairs,
        "tasks": tasks,
        "tasks_per_s": {
            k: dict(zip(("mean", "ci_low", "ci_high"), t_interval(v), strict=True))
            for k, v in rates.items()
        },  # fmt: skip
        "runs": rates,
        "ratio_slurm_over_local": {
            "gmean": math.exp(m),
            "ci_low": math.exp(lo),
            "ci_high": math.exp(hi),
        },  # fmt: skip
        "load1": {"min": min(load), "max": max(load)},
    }


def main(argv: list[str] | None = None) -> int:
    """Start a throwaway Slurm, measure the pairs, print the JSON result."""
    from perflab.batch.slurm import SlurmCluster

    ap = argparse.ArgumentParser(prog="python -m perflab.batch.provider_ab")
    ap.add_argument("--pairs", type=int, default=6)
    ap.add_argument("--tasks", type=int, default=3000)
    ap.add_argument("--workers", type=int, default=2)
    args = ap.parse_args(argv)
    with SlurmCluster() as cluster:
        os.environ.update(cluster.env())
        configs = write_configs(cluster.root, cluster.partition, args.workers)
        result = provider_ab(configs, args.pairs, args.tasks, cluster.root / "runs")
    print(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
