"""Work Queue (cctools): a local manager under the system interpreter and N loopback workers.

Debian's ``python3-workqueue`` binds only to ``/usr/bin/python3``, so the manager runs there
as ``_wq_manager.py`` and this engine drives it over a pipe, one request at a time: the
manager works only when asked, as it does when an application calls the library in-process.
A task function with a shell form (``workloads.base.shell_form``) runs as that command;
any other runs as ``python -m perflab.engines._wq_task`` with the call pickled in its command.

Admitting only the run's own workers: this cctools binds the manager to every interface and
has no option to choose one. Where this user can make a network namespace (root, or
unprivileged user namespaces), the manager and its workers run in a private one whose only
interface is its own loopback: nothing listens where anyone else can connect. Always, a
per-run password file (0600, on both sides, never on a command line) keeps other users' and
hosts' workers out (``isolation`` says which applied); and a pickled result is
signed by the run's task process with a per-run key (HMAC-SHA256, key in a 0600 file) and
checked before it is unpickled, so no worker can make perflab unpickle what it forged.
"""

from __future__ import annotations

import base64
import concurrent.futures
import functools
import hashlib
import hmac
import json
import os
import pickle
import secrets
import shlex
import shutil
import signal
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any, ClassVar

from perflab.engines import ENGINES
from perflab.engines.base import ExecutorEngine
from perflab.errors import PerflabError
from perflab.files import create_private
from perflab.options import Opt
from perflab.tasks import SHELL_FORMS, ManagerLoop

MANAGER = Path(__file__).with_name("_wq_manager.py")
PACKAGES_HINT = "apt-get install coop-computing-tools python3-workqueue"
#: Seconds one blocking wait() may last before the driver asks again (whole seconds: WQ).
WAIT_S = 5


@functools.lru_cache(maxsize=8)
def check_installed(python: str, worker: str) -> None:
    """Refuse early, naming the Debian packages, when Work Queue is not usable."""
    missing = []
    if shutil.which(worker) is None:
        missing.append(f"{worker} (Debian package coop-computing-tools)")
    probe = [python, "-c", "import work_queue"]
    try:
        ok = subprocess.run(probe, capture_output=True, timeout=30).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        ok = False
    if not ok:
        missing.append(f"the work_queue module for {python} (Debian package python3-workqueue)")
    if missing:
        raise PerflabError(
            f"engine 'workqueue' needs Work Queue: missing {'; '.join(missing)} "
            f"(install: {PACKAGES_HINT})"
        )


@ENGINES.register
class WorkQueueEngine(ExecutorEngine):
    name = "workqueue"
    model_kind = "workqueue"
    options: ClassVar[dict[str, Opt]] = {
        **ExecutorEngine.options,
        "python": Opt(default="/usr/bin/python3", help="The interpreter Work Queue binds to."),
        "worker_bin": Opt(default="work_queue_worker", help="The worker executable."),
        "connect_timeout_s": Opt(
            float, above=0, default=30, help="How long workers may take to connect (s)."
        ),
    }

    @classmethod
    def validate(cls, options: dict[str, Any], parsl_config: str | None) -> None:
        super().validate(options, parsl_config)
        opts = cls.resolve_options(options)
        if int(opts["workers"]) < 1:
            raise PerflabError("engine 'workqueue': option workers must be >= 1")
        check_installed(str(opts["python"]), str(opts["worker_bin"]))

    def start(self) -> None:
        check_installed(str(self.opts["python"]), str(self.opts["worker_bin"]))
        self.futures: dict[int, concurrent.futures.Future[Any]] = {}
        self.parsers: dict[int, Callable[[str], Any]] = {}
        self.times: dict[Any, tuple[float, float]] = {}
        self.calls: list[float] = []  # round trips of submit requests (the cheapest kind)
        self.workers: list[subprocess.Popen[bytes]] = []
        wq_dir = self.run_dir / "workqueue"
        wq_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
        password = create_private(wq_dir / "password", secrets.token_hex(32).encode())
        self.key = secrets.token_bytes(32)
        self.key_file = create_private(wq_dir / "result.key", self.key)
        enter_ns = private_netns()
        self.isolation = "netns+password" if enter_ns else "password"
        self.manager = subprocess.Popen(
            # The run's directory on the command line says whose manager this is.
            [
                *(enter_ns or []),
                str(self.opts["python"]),
                str(MANAGER),
                "0",
                str(wq_dir),
                str(password),
            ],  # fmt: skip
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            cwd=wq_dir,
            text=True,
        )
        hello = self._read()
        if "port" not in hello:
            self.shutdown()
            raise RuntimeError(f"Work Queue manager did not start: {hello}")
        self.port = int(hello["port"])
        log = open(wq_dir / "workers.log", "ab")  # noqa: SIM115 -- each worker keeps its own copy
        for _ in range(int(self.opts["workers"])):
            self.workers.append(
                subprocess.Popen(
                    [
                        *(_join_netns(self.manager.pid) if enter_ns else []),
                        str(self.opts["worker_bin"]),
                        "--cores",
                        "1",
                        "--single-shot",
                        "--password",
                        str(password),
                        "-t",
                        "60",
                        "-s",
                        str(wq_dir),
                        "127.0.0.1",
                        str(hello["port"]),
                    ],
                    stdout=log,
                    stderr=subprocess.STDOUT,
                )
            )
        log.close()
        reply = self._call(
            "connect", workers=len(self.workers), timeout=float(self.opts["connect_timeout_s"])
        )
        if "error" in reply:
            self.shutdown()
            raise RuntimeError(f"Work Queue workers did not connect: {reply['error']}")

    # --- the pipe ---------------------------------------------------------------------------
    def _read(self) -> dict[str, Any]:
        assert self.manager.stdout is not None
        line = self.manager.stdout.readline()
        if not line:
            raise RuntimeError(f"Work Queue manager exited (code {self.manager.poll()})")
        reply: dict[str, Any] = json.loads(line)
        return reply

    def _send(self, op: str, **kw: Any) -> None:
        assert self.manager.stdin is not None
        self.manager.stdin.write(json.dumps({"op": op, **kw}) + "\n")
        self.manager.stdin.flush()

    def _call(self, op: str, **kw: Any) -> dict[str, Any]:
        self._send(op, **kw)
        reply = self._read()
        if "error" in reply and op != "connect":
            raise RuntimeError(f"Work Queue manager: {reply['error']}")
        return reply

    # --- tasks ------------------------------------------------------------------------------
    def submit(self, fn: Callable[..., Any], *args: Any) -> Any:
        form = SHELL_FORMS.get(fn)
        if form is not None:
            cmd, parse = form[0](*args), form[1]
        else:
            blob = base64.b64encode(pickle.dumps((fn, args))).decode()
            key = shlex.quote(str(self.key_file))
            cmd = f"{shlex.quote(sys.executable)} -m perflab.engines._wq_task {key} {blob}"
            parse = self._parse_result
        t0 = time.perf_counter()
        tid = int(self._call("submit", cmd=cmd)["id"])
        self.calls.append(time.perf_counter() - t0)
        fut: concurrent.futures.Future[Any] = concurrent.futures.Future()
        self.futures[tid], self.parsers[tid] = fut, parse
        return fut

    def _parse_result(self, stdout: str) -> Any:
        """The task's result from its last stdout line, ``BLOB SIGNATURE``: unpickled only
        when signed with this run's key (a worker could send anything)."""
        lines = stdout.strip().splitlines()
        blob, _, sig = (lines[-1] if lines else "").partition(" ")
        want = hmac.new(self.key, blob.encode(), hashlib.sha256).hexdigest()
        # Bytes, not str: compare_digest refuses str with non-ASCII characters (TypeError),
        # and a worker's output may hold any; empty output fails the same clear way.
        if not hmac.compare_digest(sig.encode(), want.encode()):
            raise RuntimeError("Work Queue task result is not signed with this run's key")
        return pickle.loads(base64.b64decode(blob))

    def task_times(self, fut: Any) -> tuple[float, float] | None:
        return self.times.get(fut)

    def _resolve(self, task: dict[str, Any]) -> concurrent.futures.Future[Any] | None:
        tid = int(task["id"])
        fut, parse = self.futures.pop(tid, None), self.parsers.pop(tid, None)
        if fut is None or parse is None:
            return None
        # When the manager finished sending it and started receiving it (wall clock).
        self.times[fut] = (task["send_end_us"] / 1e6, task["recv_start_us"] / 1e6)
        if task["result"] != 0 or task["exit"] != 0:
            fut.set_exception(
                RuntimeError(
                    f"Work Queue task {tid} failed: result {task['result']}, "
                    f"exit {task['exit']}: {task['output'][-500:]}"
                )
            )
        else:
            try:
                fut.set_result(parse(task["output"]))
            except Exception as exc:  # a malformed output fails the task, not the engine
                fut.set_exception(exc)
        return fut

    def ready(self, pending: Iterable[Any]) -> set[Any]:
        for task in self._call("drain")["tasks"]:
            self._resolve(task)
        return {f for f in pending if f.done()}

    def wait_first(self, pending: Iterable[Any]) -> set[Any]:
        pend = set(pending)
        while True:
            done = {f for f in pend if f.done()}
            if done:
                return done
            task = self._call("wait", timeout=WAIT_S)["task"]
            if task is not None:
                self._resolve(task)

    def loop(self) -> ManagerLoop:
        # the manager's own hooks: results drained from the manager, its send/receive times
        return self

    def flush(self) -> None:
        # Work Queue sends only inside wait(): a pass, finished while the application works.
        self._call("dispatch")

    def as_completed(self, futures: Iterable[Any]) -> Iterator[Any]:
        pend = set(futures)
        while pend:
            for fut in self.wait_first(pend):
                pend.discard(fut)
                yield fut

    # --- figures for the model --------------------------------------------------------------
    def loop_stats(self) -> dict[str, float]:
        stats: dict[str, float] = self._call("stats")
        self.calls.clear()
        return stats

    def loop_costs(self, before: dict[str, float]) -> dict[str, float]:
        after = self._call("stats")
        n = max(after["total_tasks_complete"] - before["total_tasks_complete"], 1)
        us = 1e-6 / n
        return {
            # The typical round trip: a stalled submit is already in the application's own
            # time per result (take_s), and must not be charged again to every wait call.
            "call_s": statistics.median(self.calls) if self.calls else 0.0,
            "send_s": (after["time_send"] - before["time_send"]) * us,
            "recv_s": (
                after["time_receive"]
                + after["time_status_msgs"]
                - before["time_receive"]
                - before["time_status_msgs"]
            )
            * us,
        }

    def shutdown(self) -> None:
        try:
            if self.manager.poll() is None:
                self._send("stop")
                self.manager.wait(5)
        except (OSError, ValueError, subprocess.TimeoutExpired):
            pass
        procs = [*getattr(self, "workers", []), self.manager]
        for p in procs:
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + 3
        for p in procs:
            try:
                p.wait(max(deadline - time.monotonic(), 0.1))
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()


#: Brings the namespace's loopback up, then runs the manager in its place (same PID).
_LO_UP = 'ip link set lo up && exec "$@"'


@functools.lru_cache(maxsize=1)
def private_netns() -> list[str] | None:
    """The command prefix that runs a program in a new private network namespace with its
    loopback up, or None where this user cannot make one (then the password alone guards)."""
    user = [] if os.geteuid() == 0 else ["--user", "--map-root-user"]
    prefix = ["unshare", "--net", *user, "--", "sh", "-c", _LO_UP, "sh"]
    if not (shutil.which("unshare") and shutil.which("nsenter") and shutil.which("ip")):
        return None
    try:
        ok = subprocess.run([*prefix, "true"], capture_output=True, timeout=10).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        ok = False
    return prefix if ok else None


def _join_netns(pid: int) -> list[str]:
    """The prefix that runs a worker in the manager's network namespace."""
    user = [] if os.geteuid() == 0 else ["--user", "--preserve-credentials"]
    return ["nsenter", "--target", str(pid), "--net", *user, "--"]
