"""A campaign's throughput over 1, 2 and 4 nodes of a throwaway multi-node Slurm.

    .venv/bin/python bench/cluster_scaling.py [--nodes 1,2,4] [--runs 16] [--sleep 3] [--reps 3]

Needs root (the nodes are network + UTS namespaces on a private bridge: ``SlurmCluster``).
One 4-node cluster; for each node count N, ``--reps`` times: a fresh campaign of ``--runs``
runs whose command is ``sleep S`` (sleep-dominated, so this host's 2 shared cores do not
decide it) run by ``perflab campaign run --runner parsl`` with N exclusive one-node blocks.

Per campaign: the makespan (first run's start to last run's end, from the records: what the
nodes did, without the driver's start-up and Slurm's job start), the driver's wall time, and
runs per hour = runs / makespan. Per N: the mean runs/hour with a 95 % t interval over the
repetitions, and the scaling efficiency = rph(N) / (N x rph(1)) with its interval from the
intervals' ends. No assertion: the figures are printed (and with --json, as JSON).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

from perflab.analysis.stats import mean_ci
from perflab.batch.slurm import SlurmCluster
from perflab.campaign.store import Store

ROOT = Path(__file__).resolve().parents[1]

CONFIG = """
from parsl.config import Config
from parsl.executors import HighThroughputExecutor
from parsl.launchers import SrunLauncher
from parsl.providers import SlurmProvider

config = Config(
    executors=[HighThroughputExecutor(
        label="perflab_runner", address={addr!r}, max_workers_per_node=1,
        heartbeat_period=2, heartbeat_threshold=8,
        provider=SlurmProvider(
            partition={partition!r}, nodes_per_block=1, init_blocks={blocks}, min_blocks=0,
            max_blocks={blocks}, exclusive=True, walltime="00:30:00",
            launcher=SrunLauncher(), worker_init="export PATH={bin}:$PATH",
        ),
    )],
    strategy="none", run_dir={run_dir!r},
)
"""


def campaign(work: Path, cluster: SlurmCluster, name: str, nodes: int, runs: int,
             sleep: float) -> dict[str, float]:  # fmt: skip
    cfg = work / f"{name}.py"
    cfg.write_text(CONFIG.format(
        addr=cluster.addr, partition=cluster.partition, blocks=nodes,
        bin=str(Path(sys.executable).parent), run_dir=str(work / "runinfo"),
    ))  # fmt: skip
    path = f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "PATH": path,
           "PERFLAB_HOME": str(work / ".perflab"), **cluster.env()}  # fmt: skip
    db = str(work / "s.db")
    perflab = [sys.executable, "-m", "perflab"]
    subprocess.run([*perflab, "campaign", "create", name, "--command", f"sleep {sleep}; echo 1000",
                    "--factors", "a", "--design", "full",
                    "--replicates", str(runs // 2), "--store", db], env=env, cwd=work, check=True,
                   capture_output=True)  # fmt: skip
    began = time.monotonic()
    subprocess.run([*perflab, "campaign", "run", name, "--runner", "parsl", "--parsl-config",
                    str(cfg), "--store", db, "--json"], env=env, cwd=work, check=True,
                   capture_output=True)  # fmt: skip
    wall = time.monotonic() - began
    records = Store(db).records(name)
    assert len(records) == runs and all(r.status == "ok" for r in records)
    start = min(datetime.fromisoformat(r.started_at).timestamp() for r in records)
    end = max(datetime.fromisoformat(r.ended_at).timestamp() for r in records)
    used = {r.env["batch"]["node"] for r in records}
    return {"makespan_s": end - start, "wall_s": wall, "rph": runs / (end - start) * 3600,
            "nodes_used": len(used)}  # fmt: skip


def interval(xs: list[float]) -> tuple[float, float, float]:
    m, lo, hi = mean_ci(xs)
    return (m, m, m) if lo is None or hi is None else (m, lo, hi)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nodes", default="1,2,4")
    ap.add_argument("--runs", type=int, default=16)
    ap.add_argument("--sleep", type=float, default=3.0)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    counts = [int(n) for n in args.nodes.split(",")]
    out: dict[int, dict[str, object]] = {}
    with tempfile.TemporaryDirectory() as tmp, SlurmCluster(nodes=max(counts)) as cluster:
        for rep in range(args.reps):
            for n in counts:  # interleaved: a drift of the host hits every N alike
                m = campaign(Path(tmp), cluster, f"n{n}r{rep}", n, args.runs, args.sleep)
                out.setdefault(n, {"campaigns": []})["campaigns"].append(m)  # type: ignore[union-attr]
                print(f"N={n} rep {rep}: makespan {m['makespan_s']:.1f} s, driver wall "
                      f"{m['wall_s']:.1f} s, {m['rph']:.0f} runs/h on {m['nodes_used']} "
                      "node(s)", file=sys.stderr, flush=True)  # fmt: skip
    base = interval([c["rph"] for c in out[counts[0]]["campaigns"]])  # type: ignore[index]
    for n in counts:
        cs = out[n]["campaigns"]
        rph = interval([c["rph"] for c in cs])  # type: ignore[index]
        k = n / counts[0]
        out[n].update({
            "makespan_s": interval([c["makespan_s"] for c in cs]),  # type: ignore[index]
            "wall_s": interval([c["wall_s"] for c in cs]),  # type: ignore[index]
            "rph": rph,
            "efficiency": (rph[0] / (k * base[0]), rph[1] / (k * base[2]),
                           rph[2] / (k * base[1])),
        })  # fmt: skip
    if args.json:
        print(json.dumps(out, indent=1))
        return
    print(f"{args.runs} runs of `sleep {args.sleep}` per campaign, {args.reps} campaigns per N")
    print("nodes  makespan s (95% CI)      driver wall s       runs/hour (95% CI)      efficiency")
    for n in counts:
        r = out[n]
        ms, wl, rph, eff = r["makespan_s"], r["wall_s"], r["rph"], r["efficiency"]
        print(f"{n:>5}  {ms[0]:6.1f} [{ms[1]:6.1f},{ms[2]:6.1f}]  {wl[0]:6.1f} "  # type: ignore[index]
              f"[{wl[1]:5.1f},{wl[2]:5.1f}]  {rph[0]:6.0f} [{rph[1]:6.0f},{rph[2]:6.0f}]  "  # type: ignore[index]
              f"{eff[0]:.2f} [{eff[1]:.2f},{eff[2]:.2f}]")  # type: ignore[index]  # fmt: skip


if __name__ == "__main__":
    main()
