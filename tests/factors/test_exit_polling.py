"""``src_interchange_exit_polling`` on the installed Parsl: a workflow killed with SIGKILL
leaves its interchange behind, unless the factor makes the interchange see that its parent
is gone."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from perflab.factors.catalog import load_catalogs
from perflab.factors.treat import treat
from perflab.prepare.transformed import transformed_sources
from perflab.spec import RunSpec

WORKFLOW = """
import sys, time
import parsl
from parsl.config import Config
from parsl.executors import HighThroughputExecutor
from parsl.providers import LocalProvider

parsl.load(Config(executors=[HighThroughputExecutor(
    label="h", address="127.0.0.1", max_workers_per_node=1, encrypted=True,
    provider=LocalProvider(init_blocks=1, max_blocks=1))], run_dir=sys.argv[1]))

@parsl.python_app
def one():
    return 1

print(one().result(), flush=True)
time.sleep(600)
"""


def _children(pid: int) -> list[tuple[int, str]]:
    out = subprocess.run(["ps", "-eo", "pid=,ppid=,args="], capture_output=True, text=True)
    rows = [line.split(None, 2) for line in out.stdout.splitlines()]
    return [(int(p), args) for p, pp, args in rows if int(pp) == pid]


def _naming(text: str) -> list[int]:
    out = []
    for proc in Path("/proc").glob("[0-9]*"):
        try:
            if text.encode() in (proc / "cmdline").read_bytes():
                out.append(int(proc.name))
        except OSError:
            pass
    return out


def _gone(pid: int) -> bool:
    """Exited: no such process, or a zombie its new parent has not reaped yet."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return True
    return stat[stat.rfind(")") + 2] == "Z"


@pytest.mark.slow
def test_the_interchange_ends_when_its_killed_workflow_is_gone(tmp_path: Path) -> None:
    # the copy a run of the treatment gets (its scripts in bin/, first on PATH)
    spec = treat(RunSpec(target="parsl-htex"), "src_interchange_exit_polling", load_catalogs())
    [prepared] = transformed_sources(spec, tmp_path / "cache")
    tree = Path(prepared["tree"])
    script = tmp_path / "wf.py"
    script.write_text(WORKFLOW)
    # the transformed copy's scripts (interchange.py) first on PATH, as perflab's runs have it
    path = f"{tree / 'bin'}:{Path(sys.executable).parent}:{os.environ['PATH']}"
    env = {**os.environ, "PYTHONPATH": str(tree), "PATH": path}
    wf = subprocess.Popen(
        [sys.executable, str(script), str(tmp_path / "runinfo")],
        env=env, stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    kids: list[psutil.Process] = []
    try:
        assert wf.stdout is not None and wf.stdout.readline().strip() == "1"
        # the workflow's own children too (a multiprocessing child of Parsl's outlives the
        # SIGKILL): psutil signals a PID only while it is still the same process
        kids = psutil.Process(wf.pid).children(recursive=True)
        [(ich, args)] = [(p, a) for p, a in _children(wf.pid) if "interchange" in a]
        os.kill(wf.pid, signal.SIGKILL)
        wf.wait()
        deadline = time.monotonic() + 30
        while not _gone(ich) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert _gone(ich), f"the interchange outlived its workflow: {args}"
    finally:
        wf.kill()
        wf.wait()
        # LocalProvider starts the worker pool detached (its parent is not the workflow):
        # everything whose command line names this test's folder goes, with its workers
        # (multiprocessing children that name nothing), by PID while still the same process
        for pid in _naming(str(tmp_path)):
            with contextlib.suppress(psutil.Error):
                proc = psutil.Process(pid)
                kids += [proc, *proc.children(recursive=True)]
        for kid in kids:
            with contextlib.suppress(psutil.Error):
                kid.kill()
