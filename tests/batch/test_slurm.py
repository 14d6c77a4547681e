"""The Parsl runner on a real, throwaway Slurm (munged + slurmctld + slurmd on this machine):
campaigns through SlurmProvider, a SIGKILLed driver resumed, a cancelled job's runs failed
with Slurm's reason, bad input refused, and nothing of Slurm left afterwards. (A tune through
SlurmProvider runs over two nodes in tests/batch/test_cluster_command.py.)"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from attacker import as_nobody, listeners, needs_root, public
from conftest import ROOT, alive
from perflab.batch.slurm import SlurmCluster, marked
from perflab.campaign.store import Store

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("slurmctld") is None and not os.path.exists(
        "/usr/sbin/slurmctld"), reason="Slurm is not installed (scripts/setup installs it)"),
]  # fmt: skip

SCORE = """#!/bin/bash
t=",$PERFLAB_TREATMENTS,"; s=1000
case $t in *,a,*) s=$((s-400));; esac
case $t in *,b,*) s=$((s-300));; esac
echo $s
"""

CONFIG = """
from parsl.config import Config
from parsl.executors import HighThroughputExecutor
from parsl.launchers import SrunLauncher
from parsl.providers import SlurmProvider

# Two blocks, each a one-CPU Slurm job whose worker pool is an srun job step.
config = Config(
    executors=[HighThroughputExecutor(
        label="perflab_runner", address="127.0.0.1", max_workers_per_node=1,
        heartbeat_period=2, heartbeat_threshold=10,
        provider=SlurmProvider(
            partition={partition!r}, nodes_per_block=1, init_blocks=2, min_blocks=0,
            max_blocks=2, exclusive=False, walltime="00:10:00", launcher=SrunLauncher(),
            worker_init="export PATH={bin}:$PATH",
        ),
    )],
    # Parsl's default strategy_period (5 s): the runner launches init_blocks at load itself
    strategy="none", run_dir={run_dir!r},
)
"""

DAEMONS = ("slurmctld", "slurmd", "slurmstepd", "munged", "slurmscriptd")


@pytest.fixture(scope="module")
def cluster() -> Iterator[SlurmCluster]:
    c = SlurmCluster()  # under $TMPDIR, named after this PID: swept if pytest is SIGKILLed
    c.start()
    daemons = [p.pid for p in c.procs.values()]
    try:
        yield c
    finally:
        assert c.jobs() == [], "every test leaves the queue empty"
        c.stop()
        assert _left(str(c.root), daemons) == []


def _left(root: str, daemons: list[int]) -> list[str]:
    """Processes of the cluster at ``root`` still alive (zombies excluded)."""
    out = []
    for p in [*marked(root, f"{root}/slurm.conf"), *map(_proc, daemons)]:
        if p is not None and p.is_running() and p.status() != psutil.STATUS_ZOMBIE:
            out.append(f"{p.pid} {p.name()}")
    return out


def _proc(pid: int) -> psutil.Process | None:
    try:
        return psutil.Process(pid)
    except psutil.Error:
        return None


@pytest.fixture
def work(tmp_path: Path, cluster: SlurmCluster) -> Path:
    (tmp_path / "score.sh").write_text(SCORE)
    (tmp_path / "score.sh").chmod(0o755)
    (tmp_path / "slurm.py").write_text(_config(cluster.partition, tmp_path))
    return tmp_path


@needs_root
def test_another_user_cannot_use_the_cluster(cluster: SlurmCluster) -> None:
    """The daemons listen on loopback only, and uid nobody, given the cluster's whole
    slurm.conf (its ports, its munge socket's path), can neither list nor submit: munged's
    socket is in a 0700 directory, so he gets no credential the controller accepts."""
    socks = [s for p in cluster.procs.values() for s in listeners(p.pid)]
    assert socks and public(socks) == [], socks
    out = as_nobody(
        f"CONF = {cluster.conf.read_text()!r}\n"
        """
import subprocess, tempfile
fd, path = tempfile.mkstemp(suffix=".conf")
os.write(fd, CONF.encode()); os.close(fd)
env = {"SLURM_CONF": path, "PATH": "/usr/bin:/bin:/usr/sbin"}
runs = [subprocess.run(argv, capture_output=True, text=True, env=env, timeout=30)
        for argv in (["squeue", "-h"], ["sbatch", "--wrap", "touch /tmp/pwned-by-nobody"])]
report(codes=[r.returncode for r in runs], said=[r.stderr[-200:] for r in runs])
""",
        preimport=("subprocess", "tempfile"),
        timeout=90,
    )
    print(f"nobody against the cluster: {out}")
    assert all(code != 0 for code in out["codes"]), out
    assert cluster.jobs() == []


def _config(partition: str, where: Path) -> str:
    bin_dir = str(Path(sys.executable).parent)
    return CONFIG.format(partition=partition, bin=bin_dir, run_dir=str(where / "runinfo"))


def _env(work: Path, cluster: SlurmCluster, **extra: str) -> dict[str, str]:
    path = f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"
    return {**os.environ, "PYTHONPATH": str(ROOT / "src"), "PERFLAB_HOME": str(work / ".perflab"),
            "PATH": path, **cluster.env(), **extra}  # fmt: skip


def _perflab(work: Path, env: dict[str, str], *args: str, timeout: float = 240) -> (
        subprocess.CompletedProcess[str]):  # fmt: skip
    return subprocess.run([sys.executable, "-m", "perflab", *args], cwd=work, env=env,
                          capture_output=True, text=True, timeout=timeout)  # fmt: skip


def _create(work: Path, env: dict[str, str], name: str, command: str) -> None:
    proc = _perflab(work, env, "campaign", "create", name, "--command", command,
                    "--metric", "us_per_task",
                    "--factors", "a,b", "--design", "full", "--runs", "3",
                    "--store", str(work / "s.db"))  # fmt: skip
    assert proc.returncode == 0, proc.stderr


def _seqs(db: Path, name: str) -> list[int]:
    con = sqlite3.connect(db)
    try:
        rows = con.execute("SELECT seq FROM runs WHERE campaign=?", (name,)).fetchall()
    finally:
        con.close()
    return sorted(r[0] for r in rows)


def _through_slurm(records: list, cluster: SlurmCluster) -> None:
    for r in records:
        assert r.env["runner"]["provider"] == "SlurmProvider"
        assert r.env["runner"]["scheduler"] == "slurm"
        batch = r.env["batch"]  # the worker's own Slurm variables, read where it measured
        assert batch["partition"] == cluster.partition and batch["node"] == cluster.node
        assert batch["job_id"].isdigit() and batch["step_id"] == "0"  # srun's job step


def test_a_campaign_runs_on_slurm_and_resumes_after_sigkill(
    work: Path, cluster: SlurmCluster
) -> None:
    env = _env(work, cluster)
    db = work / "s.db"
    _create(work, env, "c", "sleep 0.3; ./score.sh")
    argv = [sys.executable, "-m", "perflab", "campaign", "run", "c", "--runner", "parsl",
            "--runner-config", "slurm.py", "--store", str(db), "--json"]  # fmt: skip
    driver = subprocess.Popen(argv, cwd=work, env=env, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)  # fmt: skip
    deadline = time.monotonic() + 120
    while len(_seqs(db, "c")) < 3 and time.monotonic() < deadline and driver.poll() is None:
        time.sleep(0.1)
    driver.send_signal(signal.SIGKILL)
    driver.wait()
    stored = len(_seqs(db, "c"))
    assert 3 <= stored < 12, "killed mid-campaign"
    orphans = cluster.jobs()
    assert orphans, "the killed driver's jobs outlive it (its interchange too)"
    (noted,) = (work / ".perflab" / "slurm-drivers").glob("*.json")
    interchanges = json.loads(noted.read_text())["interchanges"]
    assert sorted(json.loads(noted.read_text())["jobs"]) == sorted(orphans)
    assert interchanges and alive(interchanges)
    done = _perflab(work, env, *argv[3:])
    assert done.returncode == 0, done.stderr[-2000:]
    assert alive(interchanges) == [] and not noted.exists()
    assert json.loads(done.stdout.strip().splitlines()[-1])["ok"] == 12
    assert _seqs(db, "c") == list(range(12)), "each planned run stored exactly once"
    records = Store(db).records("c")
    scores = sorted(float(r.us_per_task or 0) for r in records)
    assert scores == [300.0] * 3 + [600.0] * 3 + [700.0] * 3 + [1000.0] * 3
    _through_slurm(records, cluster)
    # the resume cancelled the dead driver's jobs before submitting its own
    assert all(cluster.run("scontrol", "show", "job", "-o", j).stdout.count(
        "JobState=CANCELLED") == 1 for j in orphans)  # fmt: skip
    assert cluster.jobs() == []


def test_a_cancelled_job_fails_its_runs_with_slurms_reason(
    work: Path, cluster: SlurmCluster
) -> None:
    env = _env(work, cluster)
    db = work / "s.db"
    _create(work, env, "x", "sleep 3; ./score.sh")
    argv = [sys.executable, "-m", "perflab", "campaign", "run", "x", "--runner", "parsl",
            "--runner-config", "slurm.py", "--store", str(db), "--json"]  # fmt: skip
    driver = subprocess.Popen(argv, cwd=work, env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True)  # fmt: skip
    deadline = time.monotonic() + 300  # a loaded machine starts jobs slowly
    states: list[str] = []
    while time.monotonic() < deadline and driver.poll() is None:
        states = cluster.run("squeue", "-h", "-o", "%t").stdout.split()
        if len(states) == 2 and all(s == "R" for s in states):
            break
        time.sleep(0.2)
    assert len(states) == 2 and set(states) == {"R"}, f"the jobs never ran together: {states}"
    cluster.run("scancel", "--partition", cluster.partition)
    out, err = driver.communicate(timeout=600)
    assert driver.returncode == 1, err[-2000:]  # failed runs: exit 1, as on one machine
    counts = json.loads(out.strip().splitlines()[-1])
    assert counts["done"] == 12 and counts["failed"] >= 1
    failed = [r for r in Store(db).records("x") if r.status == "failed"]
    errors = [str(r.error) for r in failed]
    assert all("CANCELLED" in e for e in errors), errors
    # slurmstepd's own line, for the job or for its step (whichever it wrote last)
    assert any(re.search(r"\*\*\* (JOB|STEP) \S+ ON \S+ CANCELLED AT", e) for e in errors), errors
    assert cluster.jobs() == []


def test_bad_slurm_input_exits_2_naming_it_and_stores_nothing(
    work: Path, cluster: SlurmCluster
) -> None:
    env = _env(work, cluster)
    db = work / "s.db"
    _create(work, env, "b", "./score.sh")
    (work / "nope.py").write_text(_config("nope", work))
    nomunge = work / "nomunge.conf"
    text = Path(cluster.conf).read_text().splitlines()
    nomunge.write_text("\n".join(
        f"AuthInfo=socket={work}/no-munge.socket" if ln.startswith("AuthInfo=") else ln
        for ln in text) + "\n")  # fmt: skip
    cases = [
        ("slurm.py", {"PATH": str(work / "empty")}, "SlurmProvider needs Slurm's sbatch"),
        ("slurm.py", {"SLURM_CONF": str(nomunge)}, "munge is not running"),
        ("nope.py", {}, "Slurm partition 'nope' does not exist"),
    ]
    for config, extra, said in cases:
        proc = _perflab(work, {**env, **extra}, "campaign", "run", "b", "--runner", "parsl",
                        "--runner-config", config, "--store", str(db), "--json")  # fmt: skip
        assert proc.returncode == 2, proc.stderr
        lines = proc.stderr.strip().splitlines()
        assert len(lines) == 1 and said in lines[0] and config in lines[0], lines
    # a tune asks Slurm the same way (one case: the check is the runner's, shared)
    proc = _perflab(work, {**env, **extra}, "tune", "bt", "--command", "./score.sh",
                    "--metric", "us_per_task",
                    "--factors", "a,b,c", "--budget", "40", "--runner", "parsl",
                    "--runner-config", config, "--store", str(db))  # fmt: skip
    assert proc.returncode == 2 and said in proc.stderr, proc.stderr
    assert _seqs(db, "b") == []
    assert [n for n in Store(db).campaign_names() if n.startswith("bt")] == []
    assert cluster.jobs() == []


def test_a_stopped_cluster_leaves_no_process_and_no_job(tmp_path: Path) -> None:
    with SlurmCluster(tmp_path / "c2") as c:
        job = c.run("sbatch", "-o", "/dev/null", "--wrap", "sleep 300").stdout.split()[-1]
        deadline = time.monotonic() + 30
        steps: list[psutil.Process] = []
        while not steps:  # the job's step daemon (detached from slurmd) carries the marker
            assert time.monotonic() < deadline, c.run("squeue").stdout
            time.sleep(0.1)
            steps = [p for p in marked(str(c.root)) if p.name() == "slurmstepd"]
        assert c.jobs() == [job]
        daemons = [p.pid for p in c.procs.values()]
    assert _left(str(c.root), daemons) == []
    assert all(not p.is_running() or p.status() == psutil.STATUS_ZOMBIE for p in steps)


CHILD = """
import sys, time
from perflab.batch.slurm import SlurmCluster
c = SlurmCluster()
c.start()
print(c.root, *[p.pid for p in c.procs.values()], flush=True)
time.sleep(300)
"""


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL])
def test_a_killed_owner_leaves_nothing_behind(sig: signal.Signals) -> None:
    """SIGTERM: the owner stops its cluster before dying; SIGKILL: the next start() (here
    its sweep alone) stops the dead owner's cluster."""
    from perflab.batch.slurm import sweep_dead_clusters

    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    owner = subprocess.Popen([sys.executable, "-c", CHILD], env=env, stdout=subprocess.PIPE,
                             text=True)  # fmt: skip
    assert owner.stdout is not None
    root, *pids = owner.stdout.readline().split()
    daemons = [int(p) for p in pids]
    assert len(daemons) == 3 and _left(root, daemons)
    owner.send_signal(sig)
    assert owner.wait(timeout=60) == -sig
    if sig == signal.SIGKILL:
        assert _left(root, daemons), "nothing could stop them"
        sweep_dead_clusters()
    assert _left(root, daemons) == []
    assert not Path(root).exists()


def test_the_measured_htex_gets_its_workers_from_slurm(work: Path, cluster: SlurmCluster) -> None:
    from perflab.batch.provider_ab import write_configs

    configs = write_configs(work, cluster.partition, 2)
    env = _env(work, cluster)
    argv = ["run", "--target", "parsl-htex", "--engine-config", str(configs["slurm"]),
            "--workload", "noop", "--tasks", "300", "--json"]  # fmt: skip
    proc = _perflab(work, env, *argv)
    assert proc.returncode == 0, proc.stderr[-2000:]
    rec = json.loads(proc.stdout.strip().splitlines()[-1])
    assert rec["status"] == "ok" and rec["tasks"] == 300
    assert rec["env"]["parsl"] == {
        "executor": "HighThroughputExecutor", "provider": "SlurmProvider",
        "launcher": "SrunLauncher", "scheduler": "slurm", "partition": cluster.partition,
    }  # fmt: skip
    assert cluster.jobs() == []  # the run's cleanup cancelled its block


def test_a_failed_job_fails_its_runs_with_what_it_said(work: Path, cluster: SlurmCluster) -> None:
    """A worker_init that goes wrong (a venv that is not there): the jobs FAIL at once, and
    the runs say so instead of waiting for workers forever."""
    text = (work / "slurm.py").read_text()
    bad = text.replace('worker_init="export PATH=', 'worker_init="source /no/venv/bin/activate'
                       ' || exit 3; export PATH=')  # fmt: skip
    assert bad != text
    (work / "broken.py").write_text(bad)
    env = _env(work, cluster)
    _create(work, env, "f", "./score.sh")
    proc = _perflab(work, env, "campaign", "run", "f", "--runner", "parsl", "--runner-config",
                    "broken.py", "--store", str(work / "s.db"), "--json")  # fmt: skip
    assert proc.returncode == 1, proc.stderr[-2000:]
    assert json.loads(proc.stdout.strip().splitlines()[-1])["failed"] == 12
    for r in Store(work / "s.db").records("f"):
        assert "FAILED (Reason=NonZeroExitCode, ExitCode=3:0)" in str(r.error)
        assert "/no/venv/bin/activate: No such file or directory" in str(r.error)
    assert cluster.jobs() == []
