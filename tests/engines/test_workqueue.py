"""The workqueue engine: a real manager and workers on loopback, all stopped by PID."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from conftest import ROOT, alive, perflab
from perflab import RunSpec, measure

pytestmark = pytest.mark.slow


def _ours(run_root: str) -> list[psutil.Process]:
    """Processes whose command line names this test's run root (manager, workers, tasks)."""
    out = []
    for p in psutil.process_iter(["cmdline"]):
        try:
            if any(run_root in a for a in p.info["cmdline"] or []):
                out.append(p)
        except psutil.Error:
            continue
    return out


def test_missing_python_module_names_the_debian_package(run_root: str) -> None:
    proc = perflab(
        "run",
        "--target",
        "workqueue",
        "--opt",
        f"python={sys.executable}",
        "--workload",
        "noop",
        "--tasks",
        "2",
        "--run-root",
        run_root,
    )
    assert proc.returncode == 2, proc.stderr
    assert "python3-workqueue" in proc.stderr and "Traceback" not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1
    assert not Path(run_root).exists() or not any(Path(run_root).iterdir())


def test_missing_worker_names_the_debian_package(run_root: str) -> None:
    proc = perflab(
        "run",
        "--target",
        "workqueue",
        "--opt",
        "worker_bin=/nonexistent/work_queue_worker",
        "--workload",
        "noop",
        "--tasks",
        "2",
        "--run-root",
        run_root,
    )
    assert proc.returncode == 2
    assert "coop-computing-tools" in proc.stderr and "Traceback" not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("policy", ["retrieve-one", "drain-many"])
def test_postprocess_on_work_queue(policy: str, run_root: str) -> None:
    rec = measure(
        RunSpec(
            target="workqueue",
            workload="postprocess",
            tasks=6,
            warmup=2,
            params={"concurrency": 2, "task_s": 0.05, "pp_s": 0.01, "policy": policy},
            engine_options={"workers": 2},
            run_root=run_root,
        )
    )
    assert rec.status == "ok", rec.error
    w = rec.measurement["workload"]
    assert w["makespan_s"] >= w["ideal_makespan_s"]
    assert "wq-retrieve-many" in w["model_by_policy"]
    assert w["model_costs"]["send_s"] > 0  # the manager's own statistics reached the model
    assert not alive(rec.measurement["pids_seen"])
    assert not _ours(run_root)


def test_python_callables_run_on_work_queue(run_root: str) -> None:
    rec = measure(
        RunSpec(
            target="workqueue",
            workload="noop",
            tasks=3,
            warmup=0,
            engine_options={"workers": 1},
            run_root=run_root,
        )
    )
    assert rec.status == "ok", rec.error
    assert not alive(rec.measurement["pids_seen"])


def test_killed_run_leaves_no_manager_or_worker(run_root: str) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "perflab",
            "run",
            "--target",
            "workqueue",
            "--workers",
            "2",
            "--workload",
            "hang",
            "--tasks",
            "2",
            "--warmup",
            "0",
            "--run-root",
            run_root,
        ],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            names = " ".join(" ".join(p.cmdline()) for p in _ours(run_root))
            if "work_queue_worker" in names and "_wq_manager" in names:
                break
            time.sleep(0.2)
        else:
            pytest.fail("the manager and workers never started")
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
        deadline = time.monotonic() + 15
        while _ours(run_root) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert not _ours(run_root), [p.cmdline() for p in _ours(run_root)]
    finally:
        for p in _ours(run_root):
            p.kill()
        if proc.poll() is None:
            proc.kill()
