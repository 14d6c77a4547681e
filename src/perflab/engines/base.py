"""The engine interface: start a real task system, submit callables, stop it."""

from __future__ import annotations

import concurrent.futures
import os
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from perflab.errors import PerflabError
from perflab.options import Opt, check_options

#: Task functions that can also run as a shell command: fn -> (command builder, output parser).
SHELL_FORMS: dict[Callable[..., Any], tuple[Callable[..., str], Callable[[str], Any]]] = {}


def shell_form(
    command: Callable[..., str], parse: Callable[[str], Any]
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Declare a task function's shell equivalent, for engines that run commands."""

    def register(fn: Callable[..., Any]) -> Callable[..., Any]:
        SHELL_FORMS[fn] = (command, parse)
        return fn

    return register


if TYPE_CHECKING:
    from perflab.workloads.base import Workload


class Engine:
    """A task system under test.

    Subclasses declare ``options`` (name -> default) so that unknown options are refused
    before a run starts, and ``packages`` whose versions go in each record's env snapshot.
    """

    name: ClassVar[str] = ""
    packages: ClassVar[tuple[str, ...]] = ()
    options: ClassVar[dict[str, Any]] = {"workers": None}
    #: Job engines (shell, saga) run the workload's command line (``Workload.command()``),
    #: not its callable; the caller checks that the workload has one before the run.
    runs_commands: ClassVar[bool] = False
    #: What each option accepts, where its default (often None) does not say (``workers``:
    #: an integer >= 1 for every engine).
    option_rules: ClassVar[dict[str, Opt]] = {}
    #: How a task can depend on earlier tasks' results: ``"native"`` (the engine resolves
    #: futures given as arguments), ``"callbacks"`` (perflab chains the futures), or None
    #: (it cannot: DAG workloads are refused before the run).
    dependencies: ClassVar[str | None] = None

    def __init__(
        self, run_dir: Path, options: dict[str, Any] | None = None, parsl_config: str | None = None
    ) -> None:
        self.run_dir = run_dir
        self.given = dict(options or {})
        self.opts = self.resolve_options(self.given)
        self.parsl_config = parsl_config

    @classmethod
    def resolve_options(cls, options: dict[str, Any]) -> dict[str, Any]:
        rules = {"workers": Opt(int, lo=1), **cls.option_rules}
        check_options(options, cls.options, rules, f"engine {cls.name!r}")
        merged = {**cls.options, **options}
        if merged.get("workers") is None:
            merged["workers"] = os.cpu_count() or 1
        return merged

    @classmethod
    def validate(cls, options: dict[str, Any], parsl_config: str | None) -> None:
        """Check options in the caller's process, before any process is started."""
        cls.resolve_options(options)
        if parsl_config is not None:
            raise PerflabError(f"--parsl-config applies only to Parsl engines, not {cls.name!r}")

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

    def submit(self, fn: Callable[..., Any], *args: Any) -> Any:
        raise NotImplementedError

    def submit_after(self, fn: Callable[..., Any], deps: list[Any], *args: Any) -> Any:
        """Submit ``fn(*args, *results of deps)`` to run once every future in ``deps`` is done."""
        if self.dependencies == "native":
            return self.submit(fn, *args, *deps)
        if self.dependencies == "callbacks":
            if getattr(self, "_chainer", None) is None:
                from perflab.engines.chaining import Chainer

                self._chainer = Chainer(self.submit)
            return self._chainer.submit_after(fn, deps, *args)
        raise PerflabError(f"engine {self.name!r} cannot express task dependencies")

    def record_env(self) -> dict[str, Any]:
        """What only the running engine knows of the run's environment (e.g. ``net``: the
        network it put in front of its workers), added to the record's ``env``."""
        return {}

    def workers_total(self) -> int:
        """How many tasks can run at once (for a workload's ideal time)."""
        return int(self.opts["workers"])

    def as_completed(self, futures: Iterable[Any]) -> Iterator[Any]:
        return concurrent.futures.as_completed(list(futures))

    # Hooks for workloads that drive the engine with their own loop (postprocess). The
    # defaults fit engines whose futures are concurrent.futures futures.

    #: Which loop the post-processing model plays for this engine ("pool" or "workqueue").
    model_kind: ClassVar[str] = "pool"

    def ready(self, pending: Iterable[Any]) -> set[Any]:
        """The futures among ``pending`` that have finished, without blocking."""
        return {f for f in pending if f.done()}

    def wait_first(self, pending: Iterable[Any]) -> set[Any]:
        """Block until at least one of ``pending`` has finished; the finished ones."""
        done, _ = concurrent.futures.wait(list(pending), return_when="FIRST_COMPLETED")
        return set(done)

    def flush(self) -> None:
        """Make submitted tasks go out now (for engines that dispatch only when asked)."""

    def task_times(self, future: Any) -> tuple[float, float] | None:
        """When the engine sent a task and received its result (wall clock), if it knows."""
        return None

    def loop_stats(self) -> dict[str, float]:
        """The engine's own counters before a driven batch (see ``loop_costs``)."""
        return {}

    def loop_costs(self, before: dict[str, float]) -> dict[str, float]:
        """The manager's own time per task since ``before`` (``send_s``, ``recv_s``)."""
        return {}

    def shutdown(self) -> None:
        raise NotImplementedError

    def task_stream_begin(self) -> None:
        """Hook for profiles: start the engine's own per-task record, if it keeps one."""

    def task_stream_end(self) -> list[dict[str, Any]] | None:
        """The engine's own per-task records since ``task_stream_begin`` (None: it has none)."""
        return None

    def run_batch(self, workload: Workload, n: int) -> dict[str, Any] | None:
        """Hook: run ``n`` counted tasks the engine's own way (job systems, event streams)
        and return the keys of ``Workload.run_batch``; None (the default) lets the workload
        submit its callables through ``submit``."""
        return None

    def settle(self) -> None:
        """Hook: called after each batch, once its measured window has closed, to finish
        what the batch left running (jobs counted at submission), so the next batch starts
        from an idle tree. Raises if that work failed."""
