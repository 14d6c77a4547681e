"""The engine interface: start a real task system, run tasks on it, stop it.

:class:`Engine` is the life cycle every engine shares (options checked before anything
starts, ``start``/``shutdown``, a context manager). What an engine runs is one of two kinds:
an :class:`ExecutorEngine` runs callables (the :class:`perflab.tasks.Executor` protocol that
workloads use), a :class:`BatchEngine` runs a whole counted batch its own way (job services,
pub/sub). The measured process picks the path (``perflab.run.child``).
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import os
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from types import TracebackType
from typing import Any, ClassVar

from perflab.errors import PerflabError
from perflab.options import Opt, check_options
from perflab.tasks import CommandTasks, FuturesLoop, ManagerLoop

#: In the run directory: the measured process's own account of why it failed (an engine
#: that saw its task system die), which the record's error leads with.
FAILURE_FILE = "failure.txt"
#: The measured process's exit code when it ends itself after writing ``FAILURE_FILE``.
FAILURE_EXIT = 3


class Engine:
    """A task system under test.

    Subclasses declare ``options`` (name -> ``Opt``: default, what it accepts, help) so that
    unknown options and bad values are refused before a run starts, and ``packages`` whose
    versions go in each record's env snapshot.
    """

    name: ClassVar[str] = ""
    packages: ClassVar[tuple[str, ...]] = ()
    options: ClassVar[dict[str, Opt]] = {
        "workers": Opt(
            int, lo=1, help="Processes or threads that run tasks (default: one per core)."
        ),
    }
    #: How a task can depend on earlier results (see ``perflab.tasks.Executor``); None: it
    #: cannot, and DAG workloads are refused before the run.
    dependencies: ClassVar[str | None] = None
    #: Job engines (shell, saga) run the workload's command line (``Workload.command()``),
    #: not its callable; the caller checks that the workload has one before the run.
    runs_commands: ClassVar[bool] = False

    def __init__(
        self, run_dir: Path, options: dict[str, Any] | None = None, parsl_config: str | None = None
    ) -> None:
        self.run_dir = run_dir
        self.given = dict(options or {})
        self.opts = self.resolve_options(self.given)
        self.parsl_config = parsl_config

    @classmethod
    def resolve_options(cls, options: dict[str, Any]) -> dict[str, Any]:
        merged = check_options(options, cls.options, f"engine {cls.name!r}")
        if merged.get("workers") is None:
            merged["workers"] = os.cpu_count() or 1
        return merged

    @classmethod
    def validate(cls, options: dict[str, Any], parsl_config: str | None) -> None:
        """Check options in the caller's process, before any process is started."""
        cls.resolve_options(options)
        if parsl_config is not None:
            raise PerflabError(f"--engine-config applies only to Parsl engines, not {cls.name!r}")

    @classmethod
    def insecure(cls, options: dict[str, Any], parsl_config: str | None) -> str | None:
        """Why these options would let another local user into the run's servers (None:
        they would not). Such a run needs the user's ``--allow-insecure``."""
        return None

    #: Set from ``RunSpec.allow_insecure`` in the measured process, for what only shows
    #: once the engine is built (a release without encryption, a config file's choice).
    allow_insecure: bool = False

    def start(self) -> None:
        """Start the task system. If it fails half-way, ``shutdown`` is still called, so
        that must tolerate a partial start (attributes not yet set)."""
        raise NotImplementedError

    def record_env(self) -> dict[str, Any]:
        """What only the running engine knows of the run's environment (e.g. ``net``: the
        network it put in front of its workers), added to the record's ``env``."""
        return {}

    def shutdown(self) -> None:
        """Stop everything ``start`` started."""
        raise NotImplementedError

    def abandonable(self) -> bool:
        """Whether killing the run's process tree after its last counted window loses
        nothing (``run/teardown``): True only for an engine whose every process lives in the
        run's tree and whose shutdown records nothing. Asked of the started engine (a
        config file may put workers elsewhere). Default False: a clean shutdown."""
        return False

    def begin(self) -> None:
        """``start()``; if it fails half-way, what it did start (servers, clients) is stopped
        before the error goes on (its own shutdown error would only hide the cause)."""
        try:
            self.start()
        except BaseException:
            with contextlib.suppress(Exception):
                self.shutdown()
            raise

    def __enter__(self) -> Engine:
        self.begin()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.shutdown()


class ExecutorEngine(Engine):
    """An engine that runs callables (implements :class:`perflab.tasks.Executor`)."""

    def submit(self, fn: Callable[..., Any], *args: Any) -> Any:
        raise NotImplementedError

    def as_completed(self, futures: Iterable[Any]) -> Iterator[Any]:
        return concurrent.futures.as_completed(list(futures))

    def workers_total(self) -> int:
        return int(self.opts["workers"])

    def loop(self) -> ManagerLoop:
        return FuturesLoop()

    def task_stream_begin(self) -> None:
        """Hook for profiles: start the engine's own per-task record, if it keeps one."""

    def task_stream_end(self) -> list[dict[str, Any]] | None:
        """The engine's own per-task records since ``task_stream_begin`` (None: it has none)."""
        return None


class BatchEngine(Engine):
    """An engine that runs each counted batch itself (job services, pub/sub)."""

    def run_batch(self, tasks: CommandTasks, n: int) -> dict[str, Any]:
        """Run ``n`` counted tasks of ``tasks`` and return the batch's timings (the keys of
        ``perflab.engines.jobs.batch_result``)."""
        raise NotImplementedError

    def settle(self) -> None:
        """Called after each batch, once its window has closed, to finish what the batch
        left running (jobs counted at submission), so the next batch starts from an idle
        tree. Raises if that work failed."""
