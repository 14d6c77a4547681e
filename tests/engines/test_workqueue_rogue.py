"""The workqueue engine against another local user (uid ``nobody``) and against a rogue
worker (issue 24), played through the engine's own driver path.

The three attack tests (``-k "nobodys or forged"``) use only what the engine had before the
fix as well (``start``, ``submit``, ``futures``, ``_resolve``, ``_call``), so they show each
attack succeeding on the pre-fix code and failing after it. The rest check the fix's parts:
private secret files, a manager that never runs open, one clear error for any unsigned
output. ``tests/engines/test_workqueue_access.py`` checks the listeners and the parser.
(Not ``test_workqueue.py``: tests/run has one, and pytest's default import mode needs unique
basenames.)
"""

from __future__ import annotations

import base64
import operator
import os
import pickle
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psutil
import pytest

from attacker import as_nobody, listeners, needs_root
from perflab.engines import workqueue
from perflab.engines.workqueue import WorkQueueEngine
from perflab.files import create_private

#: As nobody: a stock work_queue_worker, no password, pointed at the run's manager for a few
#: seconds (the manager admits workers only while the driver has it inside wait()).
ROGUE = """
d = tempfile.mkdtemp()
w = subprocess.Popen(["work_queue_worker", "--single-shot", "-t", "8", "-s", d,
                      "127.0.0.1", str(PORT)], stdout=subprocess.DEVNULL,
                     stderr=subprocess.DEVNULL)
time.sleep(6)
w.kill()
report(done=True)
"""


class Proof:
    """Unpickling this creates a file: what a rogue worker's answer would do in perflab."""

    def __init__(self, path: str) -> None:
        self.path = path

    def __reduce__(self) -> tuple[Any, ...]:
        return (open, (self.path, "w"))


@pytest.fixture
def engine(tmp_path: Path) -> Iterator[WorkQueueEngine]:
    """A started engine with one worker, stopped whatever the test does."""
    run_dir = tmp_path / "run"
    run_dir.mkdir(mode=0o700)
    eng = WorkQueueEngine(run_dir, {"workers": 1})
    try:
        eng.start()
        yield eng
    finally:
        eng.shutdown()


def _manager_port(eng: WorkQueueEngine) -> int:
    """The port the manager listens on (the pre-fix engine kept it only in its socket)."""
    port = getattr(eng, "port", None)
    if port is not None:
        return int(port)
    return next(p for _, p, pid in listeners(os.getpid()) if pid == eng.manager.pid)


def _rogue_worker_joins(eng: WorkQueueEngine) -> tuple[int, int]:
    """Run nobody's worker against the manager; workers connected before and after it."""
    before = int(eng._call("stats")["workers_connected"])
    attacker = threading.Thread(
        target=as_nobody,
        args=(f"PORT={_manager_port(eng)}\n" + ROGUE,),
        kwargs={"preimport": ("subprocess", "tempfile", "time")},
    )
    attacker.start()
    # Keep the manager in wait() for longer than his worker tries: every chance to join.
    eng._call("connect", workers=before + 1, timeout=7)
    after = int(eng._call("stats")["workers_connected"])
    attacker.join()
    return before, after


@pytest.mark.slow
@needs_root
def test_nobodys_worker_does_not_join_the_run(engine: WorkQueueEngine) -> None:
    """The default: a private network namespace where this user can make one, plus the
    password (CI is root, so the namespace applies)."""
    seen = listeners(os.getpid())
    print(f"workqueue ({getattr(engine, 'isolation', 'none')}) listeners on this host: {seen}")
    if getattr(engine, "isolation", "").startswith("netns"):  # root: CI takes this branch
        assert seen == []  # the manager listens only inside its private namespace
    before, after = _rogue_worker_joins(engine)
    assert after == before, f"uid nobody's worker joined the run's manager ({before} -> {after})"


@pytest.mark.slow
@needs_root
def test_nobodys_worker_does_not_join_without_a_namespace(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where no namespace can be made, the manager listens on every interface of the host
    (this cctools cannot choose one): the password alone must keep him out."""
    monkeypatch.setattr(workqueue, "private_netns", lambda: None, raising=False)
    run_dir = tmp_path / "run"
    run_dir.mkdir(mode=0o700)
    eng = WorkQueueEngine(run_dir, {"workers": 1})
    try:
        eng.start()
        print(f"workqueue ({getattr(eng, 'isolation', 'none')}) listeners on this host: "
              f"{listeners(os.getpid())}")  # fmt: skip
        before, after = _rogue_worker_joins(eng)
        assert after == before, f"uid nobody's worker joined the manager ({before} -> {after})"
    finally:
        eng.shutdown()


@pytest.mark.slow
def test_a_forged_result_fails_its_task_not_the_engine(
    engine: WorkQueueEngine, tmp_path: Path
) -> None:
    """A worker's answer for a pickled call is handed to the driver as the manager would
    hand it over: it must not be unpickled, the task fails naming why, the run goes on."""
    proof = tmp_path / "proof"
    forged = base64.b64encode(pickle.dumps(Proof(str(proof)))).decode()
    # operator.add has no shell form, so it goes the pickled-call path
    for output in (f"noise\n{forged}\n", f"{forged} {'0' * 64}\n"):
        fut = engine.submit(operator.add, 2, 3)
        tid = next(t for t, f in engine.futures.items() if f is fut)
        task = {"id": tid, "result": 0, "exit": 0, "output": output}
        engine._resolve({**task, "send_end_us": 0, "recv_start_us": 0})
        assert not proof.exists(), "a worker's answer ran code in perflab"
        with pytest.raises(RuntimeError, match="not signed with this run's key"):
            fut.result(timeout=0)
    # the engine still runs the real thing, whose result is signed by the run's task process
    real = engine.submit(operator.add, 2, 3)
    assert [f.result() for f in engine.as_completed([real])] == [5]


@pytest.mark.slow
def test_the_runs_secrets_are_private_and_on_no_command_line(engine: WorkQueueEngine) -> None:
    wq_dir = engine.run_dir / "workqueue"
    secrets = [wq_dir / "password", wq_dir / "result.key"]
    for path in secrets:
        assert path.stat().st_mode & 0o777 == 0o600, path
    assert wq_dir.stat().st_mode & 0o777 == 0o700
    words = [p.read_bytes() for p in secrets]
    words.append(words[1].hex().encode())
    pids = [engine.manager.pid, *(w.pid for w in engine.workers)]
    procs = [psutil.Process(pid) for pid in pids]
    for proc in procs:
        cmdline = b"\0".join(a.encode() for a in proc.cmdline())
        assert not any(w in cmdline for w in words), proc.cmdline()


def test_a_planted_secret_file_is_refused(tmp_path: Path) -> None:
    """The secret files are made O_EXCL|O_NOFOLLOW: a symlink or file someone put there
    first is an error, never followed or reused."""
    target = tmp_path / "elsewhere"
    (tmp_path / "password").symlink_to(target)
    with pytest.raises(FileExistsError):
        create_private(tmp_path / "password", b"x")
    assert not target.exists()
    made = create_private(tmp_path / "key", b"y")
    assert made.stat().st_mode & 0o777 == 0o600 and made.read_bytes() == b"y"


@pytest.mark.parametrize("output", ["", "\n", "résumé ☃", "gASV Zm9v\u00e9"], ids=repr)
def test_any_unsigned_output_fails_with_the_same_clear_error(tmp_path: Path, output: str) -> None:
    """Empty output or non-ASCII bytes from a worker: the task's error names the cause (not an
    IndexError or compare_digest's TypeError)."""
    eng = WorkQueueEngine(tmp_path, {"workers": 1})
    eng.key = os.urandom(32)  # the run's key, which start() would make
    with pytest.raises(RuntimeError, match="not signed with this run's key"):
        eng._parse_result(output)


@pytest.mark.parametrize("problem", ["missing", "empty", "no argument"])
def test_the_manager_never_runs_without_a_password(tmp_path: Path, problem: str) -> None:
    """The binding returns 0 for a password file it cannot use and would then admit any
    worker: the manager must refuse to start instead."""
    pw = tmp_path / "password"
    if problem == "empty":
        pw.touch(mode=0o600)
    argv = ["0", str(tmp_path)] + ([] if problem == "no argument" else [str(pw)])
    python = str(WorkQueueEngine.options["python"].default)
    workqueue.check_installed(python, str(WorkQueueEngine.options["worker_bin"].default))
    proc = subprocess.run(
        [python, str(workqueue.MANAGER), *argv],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 2, proc
    assert "port" not in proc.stdout and "error" in proc.stdout, proc.stdout
