"""A dead HTEX interchange fails its run at once, with its cause (issue 39: a bisected
commit's interchange raised NameError at start, and every run of it waited its timeout)."""

from __future__ import annotations

import subprocess
import sys
import threading
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from conftest import alive
from perflab import RunSpec, measure
from perflab.engines.base import FAILURE_FILE
from perflab.engines.htex_watch import InterchangeWatch, cause, exit_code
from perflab.run.fill import fill
from perflab.run.record import RunRecord

#: A config whose interchange reads its settings and dies as #4068's did.
CONFIG = """
import sys
from parsl.config import Config
from parsl.executors import HighThroughputExecutor
from parsl.providers import LocalProvider

DIE = "import pickle, sys; pickle.load(sys.stdin.buffer); starter_not_yet_defined()"
config = Config(
    executors=[
        HighThroughputExecutor(
            label="htex", address="127.0.0.1", max_workers_per_node=1, encrypted=True,
            interchange_launch_cmd=[sys.executable, "-c", DIE],
            provider=LocalProvider(init_blocks=1, min_blocks=1, max_blocks=1),
        )
    ],
    strategy="none",
)
"""


def _watched(procs: list[Any]) -> tuple[InterchangeWatch, list[tuple[str, int]], threading.Event]:
    deaths: list[tuple[str, int]] = []
    seen = threading.Event()

    def died(ex: Any, code: int) -> None:
        deaths.append((ex.label, code))
        seen.set()

    executors = [SimpleNamespace(label=f"ex{i}", interchange_proc=p) for i, p in enumerate(procs)]
    watch = InterchangeWatch(executors, Path("/nonexistent"), on_death=died)
    return watch, deaths, seen


def test_an_interchange_that_exits_is_reported_with_its_code() -> None:
    alive_one = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    dying = subprocess.Popen([sys.executable, "-c", "raise SystemExit(5)"])
    watch, deaths, seen = _watched([alive_one, dying])
    try:
        watch.start()
        assert seen.wait(30), "the exit was never noticed"
        assert deaths == [("ex1", 5)]
    finally:
        watch.stop()
        alive_one.kill()
        alive_one.wait()


def test_an_exit_after_stop_is_the_shutdown_s_own_and_not_reported() -> None:
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    watch, deaths, _ = _watched([proc])
    watch.start()
    watch.stop()
    proc.kill()
    proc.wait()
    assert deaths == []
    assert exit_code(proc) == -9


def test_the_cause_names_the_executor_code_and_log(tmp_path: Path) -> None:
    (tmp_path / "htex").mkdir()
    (tmp_path / "htex" / "interchange.log").write_text("a\nb\nlast words\n")
    ex = SimpleNamespace(label="htex", logdir=str(tmp_path / "htex"))
    text = cause(ex, 1)
    assert text.startswith("HTEX interchange exited (code 1) of executor 'htex'")
    assert text.endswith("last words")
    assert cause(SimpleNamespace(label="x"), -9).startswith("HTEX interchange exited (code -9)")


def test_the_record_leads_with_the_measured_process_s_own_cause(tmp_path: Path) -> None:
    (tmp_path / FAILURE_FILE).write_text("HTEX interchange exited (code 1) of executor 'x'\n")
    (tmp_path / "stderr.txt").write_text("Traceback (most recent call last):\nNameError: y\n")
    started = RunRecord("r1", "t0", "t1", "parsl-htex", "noop", "ok")
    rec = fill(started, RunSpec(), {"returncode": 3}, tmp_path)
    assert rec.status == "failed"
    assert (rec.error or "").splitlines() == [
        "HTEX interchange exited (code 1) of executor 'x'",
        "exit code 3",
        "Traceback (most recent call last):",
        "NameError: y",
    ]
    (tmp_path / FAILURE_FILE).unlink()  # without it, as before: the exit code, then stderr
    assert fill(started, RunSpec(), {"returncode": 3}, tmp_path).error == (
        "exit code 3\nTraceback (most recent call last):\nNameError: y"
    )


@pytest.mark.slow
def test_a_run_whose_interchange_dies_at_start_fails_at_once_with_the_cause(
    tmp_path: Path, run_root: str
) -> None:
    config = tmp_path / "dies.py"
    config.write_text(CONFIG)
    timeout = 120.0  # Parsl alone waits 120 s for a dead interchange's ports
    rec = measure(
        RunSpec(
            target="parsl-htex",
            workload="noop",
            tasks=5,
            warmup=0,
            timeout_s=timeout,
            parsl_config=str(config),
            run_root=run_root,
        )
    )
    assert rec.status == "failed", rec.error
    error = rec.error or ""
    assert error.startswith("HTEX interchange exited (code 1)"), error
    assert "NameError: name 'starter_not_yet_defined' is not defined" in error
    assert "timed out" not in error and "Interchange failed to start" not in error
    # a functional bound, not a speed: the run ended long before Parsl's own 120 s wait
    assert rec.measurement["phases"]["total"] < timeout / 2
    assert not alive(rec.measurement["pids_seen"])
