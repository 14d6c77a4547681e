"""End an HTEX run at once, with the cause, when its interchange process has died.

HTEX does not watch its interchange. When it exits (a tree whose interchange.py raises
``NameError`` at start, as a bisected commit's did), ``parsl.load`` waits up to 120 s for
the interchange's ports, and a task submitted to a dead interchange is never resolved: the
run sat until its ``timeout_s`` and its record said only "timed out". The watch is a thread
of the measured process that blocks on the interchange's pidfd (no polling while the run is
measured) and, when it exits before the engine's own shutdown, writes the cause for the
record and ends the process: the run is failed within a second, with the real cause.
"""

from __future__ import annotations

import os
import select
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from perflab.engines.base import FAILURE_EXIT, FAILURE_FILE

#: Seconds between looks while the interchange's process does not exist yet (during load).
FIND_PERIOD_S = 0.05
#: Seconds between looks where the kernel has no pidfd (sampling instead of blocking).
POLL_PERIOD_S = 0.5
#: Lines of the interchange's own log quoted in the cause, and at most so many characters
#: of them (the record keeps the cause's first 2000).
LOG_LINES = 20
LOG_CHARS = 1500


def interchange_of(ex: Any) -> Any:
    """The executor's interchange process: a ``subprocess.Popen`` (``interchange_proc``) in
    current releases, a ``multiprocessing`` process (``queue_proc``) in older ones; None
    until the executor has started it."""
    return getattr(ex, "interchange_proc", None) or getattr(ex, "queue_proc", None)


def exit_code(proc: Any) -> int | None:
    """The process's exit code (negative: the signal that ended it), None while it runs."""
    code = proc.poll() if hasattr(proc, "poll") else getattr(proc, "exitcode", None)
    return None if code is None else int(code)


def log_tail(ex: Any, lines: int = LOG_LINES) -> str:
    """The last ``lines`` of the executor's ``interchange.log`` ("" when there is none: an
    interchange that died before it set up its logging)."""
    try:
        path = Path(ex.logdir) / "interchange.log"
        text = path.read_text(errors="replace")
    except (AttributeError, OSError, TypeError):
        return ""
    tail = "\n".join(text.strip().splitlines()[-lines:])
    return tail[-LOG_CHARS:]


def cause(ex: Any, code: int) -> str:
    """The failure's text: which interchange exited, with what code, and its log's tail (its
    traceback went to the run's stderr, which the record quotes after this)."""
    label = getattr(ex, "label", "?")
    head = f"HTEX interchange exited (code {code}) of executor {label!r} while the run needed it"
    tail = log_tail(ex)
    return f"{head}\n--- interchange.log (last lines)\n{tail}" if tail else head


def fail_process(run_dir: Path, text: str) -> None:
    """Leave ``text`` as the run's cause and end the measured process now: its threads and
    Parsl's own waits would otherwise hold it until the run's timeout. The supervisor ends
    what is left of the tree."""
    try:
        (run_dir / FAILURE_FILE).write_text(text + "\n")
    except OSError:  # then the record's stderr tail carries it
        print(f"perflab: {text}", file=sys.stderr, flush=True)
    os._exit(FAILURE_EXIT)


class InterchangeWatch:
    """Watches the interchanges of ``executors`` from ``start()`` until ``stop()``; calls
    ``on_death(executor, code)`` (by default: fail the process) if one exits in between."""

    def __init__(
        self,
        executors: list[Any],
        run_dir: Path,
        on_death: Callable[[Any, int], None] | None = None,
    ) -> None:
        self.executors = executors
        self.on_death = on_death or (lambda ex, code: fail_process(run_dir, cause(ex, code)))
        self._lock = threading.Lock()
        self._stopped = False
        self._wake_r, self._wake_w = os.pipe()
        self._thread = threading.Thread(target=self._run, name="perflab-interchange-watch")
        self._thread.daemon = True

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        """Before a shutdown that ends the interchanges itself: their exit is then expected."""
        with self._lock:
            if self._stopped:
                return
            self._stopped = True
            os.write(self._wake_w, b"x")
        self._thread.join(timeout=5)
        if not self._thread.is_alive():
            for fd in (self._wake_r, self._wake_w):
                os.close(fd)

    def _run(self) -> None:
        watched: dict[int, tuple[Any, Any, int]] = {}  # id(executor) -> executor, proc, pidfd
        try:
            while True:
                for ex in self.executors:  # they start in turn, during load
                    proc = interchange_of(ex)
                    if id(ex) not in watched and proc is not None:
                        watched[id(ex)] = (ex, proc, _pidfd(int(proc.pid)))
                if not all(self._check(ex, proc) for ex, proc, _ in watched.values()):
                    return
                fds = [fd for _, _, fd in watched.values() if fd >= 0]
                if len(watched) < len(self.executors):
                    timeout: float | None = FIND_PERIOD_S
                else:  # the whole measured run is spent here, blocked (pidfds) or sampling
                    timeout = None if len(fds) == len(watched) else POLL_PERIOD_S
                ready, _, _ = select.select([self._wake_r, *fds], [], [], timeout)
                if self._wake_r in ready:
                    return
                if ready:  # exited, yet not reaped by this thread: give the other a moment
                    time.sleep(FIND_PERIOD_S)
        finally:
            for _, _, fd in watched.values():
                if fd >= 0:
                    os.close(fd)

    def _check(self, ex: Any, proc: Any) -> bool:
        """False once the interchange has exited (after reporting it, unless stopped)."""
        with self._lock:
            if self._stopped:
                return False
            code = exit_code(proc)
            if code is None:
                return True
            self.on_death(ex, code)
            return False


def _pidfd(pid: int) -> int:
    try:
        return os.pidfd_open(pid)
    except (AttributeError, OSError):
        return -1
