"""Fast teardown: end a run's process tree as soon as its last counted window has closed.

A task system's graceful shutdown (Parsl's DFK cleanup, a Dask cluster's close) takes a
second or more per run, and nothing of it is recorded: the counted window, the run's
environment and the task streams are all taken before it. So, unless the run asks for a
clean shutdown, the measured process writes its result and exits at once, and the
supervisor kills what is left of the tree with SIGKILL (it is its subreaper: no process
escapes) instead of waiting for it to wind down by itself.

A clean shutdown stays: ``--graceful`` (``RunSpec.graceful``), a profiled run (its tracer
writes to the end), a workload that measures the shutdown (``measures_shutdown = True``)
and any engine that does not declare, by its ``Engine.abandonable()`` returning True, that
killing its tree loses nothing (an engine whose workers run outside the tree, such as
Slurm jobs, must be shut down to release them).
"""

from __future__ import annotations

import os
import signal
import sys
import time
from typing import TYPE_CHECKING, Any

import psutil

from perflab.spec import RunSpec

if TYPE_CHECKING:
    from perflab.engines.base import Engine
    from perflab.workloads.base import Workload

#: The mark a measured process sends the supervisor when its tree may be killed.
DONE = "done"
#: Seconds a killed tree's multiprocessing resource trackers get to unlink what it left.
TRACKER_GRACE_S = 2.0


def fast(spec: RunSpec, engine: Engine, workload: Workload) -> bool:
    """Whether this run's tree is killed after its result is written (no clean shutdown)."""
    if spec.graceful or spec.profile or workload.measures_shutdown:
        return False
    return engine.abandonable()


def leave(window: Any) -> None:
    """Tell the supervisor the tree may go, then exit without the interpreter's own
    teardown (the engine's threads and atexit handlers would start its shutdown)."""
    sys.stdout.flush()
    sys.stderr.flush()
    window.mark(DONE, 0)
    os._exit(0)


def kill_tree(tree: Any) -> list[dict[str, Any]]:
    """SIGKILL every descendant of the supervisor's ``tree`` at once, again until none is
    left (a process may fork while it dies), reaping them; returns those that survived 5 s
    of it (none).

    multiprocessing's resource trackers are spared up to ``TRACKER_GRACE_S``: once every
    process that registered a named semaphore or shared memory with one is dead, it unlinks
    them itself and exits (killed with the rest, they would stay in /dev/shm).
    """
    trackers: dict[tuple[int, float], bool] = {}
    now = time.monotonic()
    end, spare_until = now + 5.0, now + TRACKER_GRACE_S
    while time.monotonic() < end:
        tree.reap()
        alive = tree.procs()
        if not alive:
            return []
        targets = [p for p in alive if not _tracker(p, trackers)]
        if not targets and time.monotonic() > spare_until:
            targets = alive
        for p in targets:
            try:
                p.send_signal(signal.SIGKILL)
            except psutil.Error:
                pass
        time.sleep(0.005)
    tree.reap()
    survivors: list[dict[str, Any]] = tree.describe(tree.procs())
    return survivors


def _tracker(p: psutil.Process, seen: dict[tuple[int, float], bool]) -> bool:
    """Whether ``p`` is a multiprocessing resource tracker (cached by pid and start)."""
    try:
        key = (p.pid, p.create_time())
        if key not in seen:
            seen[key] = "multiprocessing.resource_tracker" in " ".join(p.cmdline())
        return seen[key]
    except psutil.Error:
        return False
