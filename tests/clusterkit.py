"""What the throwaway-Slurm tests share (tests/batch/test_cluster.py, its 4-node cluster's
faults; tests/batch/test_cluster_command.py, ``scripts/slurm``'s own clusters): the measured
command, the runner's Parsl config, the CLI's environment, and what a cluster leaves behind."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import psutil
import pytest

from attacker import needs_root
from conftest import ROOT
from perflab.batch import netns
from perflab.batch.slurm import marked

#: The measured command's score. While the test holds the runs (file ``hold``), a run says
#: on which node it waits (a file in ``held/``) and waits: a fault lands on runs in flight,
#: and a revived node finds runs left.
SCORE = """#!/bin/bash
if [ -e {work}/hold ]; then
  hostname > {work}/held/$$
  while [ -e {work}/hold ]; do sleep 0.1; done
fi
t=",$PERFLAB_TREATMENTS,"; s=1000
case $t in *,a,*) s=$((s-400));; esac
case $t in *,b,*) s=$((s-300));; esac
echo $((s + RANDOM % 13))
"""

#: What a test that starts a throwaway Slurm needs: root, and Slurm's daemons.
CLUSTER_MARKS = [
    pytest.mark.slow,
    needs_root,
    pytest.mark.skipif(shutil.which("slurmctld") is None and not os.path.exists(
        "/usr/sbin/slurmctld"), reason="Slurm is not installed (scripts/setup installs it)"),
]  # fmt: skip

#: One block per node, each an exclusive one-node job whose worker pool (one worker) is an
#: srun job step; the workers reach the interchange on the bridge's address, encrypted.
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
            max_blocks={blocks}, exclusive={exclusive}, walltime="00:10:00",
            launcher=SrunLauncher(), worker_init="export PATH={bin}:$PATH",
        ),
    )],
    strategy="none", run_dir={run_dir!r},
)
"""


def write_config(path: Path, addr: str, partition: str, blocks: int,
                 exclusive: bool = True) -> Path:  # fmt: skip
    path.write_text(CONFIG.format(
        addr=addr, partition=partition, blocks=blocks, exclusive=exclusive,
        bin=str(Path(sys.executable).parent), run_dir=str(path.parent / "runinfo"),
    ))  # fmt: skip
    return path


def write_score(work: Path) -> None:
    (work / "score.sh").write_text(SCORE.format(work=work))
    (work / "score.sh").chmod(0o755)
    (work / "held").mkdir()


def leftovers(owner: int, root: str, daemons: list[int]) -> list[str]:
    """What is left of a cluster: processes (marked, or its daemons), namespaces, links."""
    out = []
    for p in [*procs(daemons), *marked(root, f"{root}/slurm.conf")]:
        try:
            if p.status() != psutil.STATUS_ZOMBIE:
                out.append(f"{p.pid} {p.name()}")
        except psutil.Error:
            pass
    nss, links = netns.owned(owner)
    return out + nss + links + ([root] if Path(root).exists() else [])


def procs(pids: list[int]) -> list[psutil.Process]:
    out = []
    for pid in pids:
        try:
            out.append(psutil.Process(pid))
        except psutil.Error:
            pass
    return out


def cli_env(work: Path, conf: dict[str, str]) -> dict[str, str]:
    path = f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"
    return {**os.environ, "PYTHONPATH": str(ROOT / "src"), "PERFLAB_HOME": str(work / ".perflab"),
            "PATH": path, **conf}  # fmt: skip


def run_perflab(work: Path, env: dict[str, str], *args: str, timeout: float = 240) -> (
        subprocess.CompletedProcess[str]):  # fmt: skip
    return subprocess.run([sys.executable, "-m", "perflab", *args], cwd=work, env=env,
                          capture_output=True, text=True, timeout=timeout)  # fmt: skip


def where(records: list, nodes: list[str]) -> None:
    """Each record names its node, job and step, and the one kernel of all the nodes."""
    boot = Path("/proc/sys/kernel/random/boot_id").read_text().strip()
    for r in records:
        assert r.status == "ok", r.error
        batch, host = r.env["batch"], r.env["host"]
        assert batch["node"] in nodes and batch["job_id"].isdigit()
        assert batch["step_id"] == "0" and host["hostname"] == batch["node"]
        assert host["boot_id"] == boot  # namespaces: one kernel, whatever the hostname
        assert host["netns"].startswith("net:[")  # but a network of its own per node
