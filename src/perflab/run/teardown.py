"""Fast teardown: end a run's process tree as soon as its last counted window has closed.

A task system's graceful shutdown (Parsl's DFK cleanup, a Dask cluster's close) takes a
second or more per run, and nothing of it is recorded: the counted window, the run's
environment and the task streams are all taken before it. So, unless the run asks for a
clean shutdown, the measured process writes its result and exits at once, and the
supervisor kills what is left of the tree with SIGKILL (it is its subreaper: no process
escapes) instead of waiting for it to wind down by itself.

A clean shutdown stays: ``--graceful`` (``RunSpec.graceful``), a profiled run (its tracer
writes to the end), a workload that measures the shutdown (``measures_shutdown = True``)
and any engine that does not declare, by a method ``abandonable()`` returning True, that
killing its tree loses nothing (an engine whose workers run outside the tree, such as
Slurm jobs, must be shut down to release them).
"""

from __future__ import annotations

import os
import sys
from typing import Any

from perflab.run.spec import RunSpec

#: The mark a measured process sends the supervisor when its tree may be killed.
DONE = "done"


def fast(spec: RunSpec, engine: Any, workload: Any) -> bool:
    """Whether this run's tree is killed after its result is written (no clean shutdown)."""
    if spec.graceful or spec.profile or getattr(workload, "measures_shutdown", False):
        return False
    abandonable = getattr(engine, "abandonable", None)
    return bool(abandonable()) if callable(abandonable) else False


def leave(window: Any) -> None:
    """Tell the supervisor the tree may go, then exit without the interpreter's own
    teardown (the engine's threads and atexit handlers would start its shutdown)."""
    sys.stdout.flush()
    sys.stderr.flush()
    window.mark(DONE, 0)
    os._exit(0)
