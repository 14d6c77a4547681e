"""What a workload may ask of a task system: small protocols, shared by engines and workloads.

Neither side imports the other. An engine is either an :class:`Executor` (it runs Python
callables and returns futures, like a ``concurrent.futures.Executor``) or a batch runner (it
runs a whole counted batch its own way: job services, pub/sub; see
``perflab.engines.base.BatchEngine``), and the measured process picks the path. Dependencies
come from a wrapper (:class:`perflab.tasks.depend.Dependent`), and the hooks of a workload that
drives its own manager loop from :meth:`Executor.loop`, so an engine implements only what it
is.
"""

from __future__ import annotations

import concurrent.futures
from collections.abc import Callable, Iterable, Iterator
from typing import Any, ClassVar, Protocol, runtime_checkable

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


class ManagerLoop(Protocol):
    """The hooks of a workload that drives the engine with its own loop (post-processing)."""

    #: Which loop the post-processing model plays for this engine ("pool" or "workqueue").
    model_kind: str

    def ready(self, pending: Iterable[Any]) -> set[Any]:
        """The futures among ``pending`` that have finished, without blocking."""
        ...

    def wait_first(self, pending: Iterable[Any]) -> set[Any]:
        """Block until at least one of ``pending`` has finished; the finished ones."""
        ...

    def flush(self) -> None:
        """Make submitted tasks go out now (for engines that dispatch only when asked)."""
        ...

    def task_times(self, future: Any) -> tuple[float, float] | None:
        """When the engine sent a task and received its result (wall clock), if it knows."""
        ...

    def loop_stats(self) -> dict[str, float]:
        """The engine's own counters before a driven batch (see ``loop_costs``)."""
        ...

    def loop_costs(self, before: dict[str, float]) -> dict[str, float]:
        """The manager's own time per task since ``before`` (``send_s``, ``recv_s``)."""
        ...


@runtime_checkable
class Executor(Protocol):
    """A task system that runs callables: submit, collect, and how many run at once."""

    #: How a task can depend on earlier results: ``"native"`` (the engine resolves futures
    #: given as arguments), ``"callbacks"`` (perflab chains the futures), or None (it cannot).
    dependencies: ClassVar[str | None]

    def submit(self, fn: Callable[..., Any], *args: Any) -> Any:
        """Run ``fn(*args)``; a future with ``result()``, ``done()`` and done-callbacks."""
        ...

    def as_completed(self, futures: Iterable[Any]) -> Iterator[Any]:
        """``futures`` in the order they finish."""
        ...

    def workers_total(self) -> int:
        """How many tasks can run at once (for a workload's ideal time)."""
        ...

    def loop(self) -> ManagerLoop:
        """The hooks for a workload's own manager loop."""
        ...


class FuturesLoop:
    """The manager-loop hooks for futures that a ``wait`` function understands (the
    ``concurrent.futures`` one by default): nothing to flush, no per-task times."""

    model_kind = "pool"

    def __init__(self, wait: Callable[..., Any] = concurrent.futures.wait) -> None:
        self._wait = wait

    def ready(self, pending: Iterable[Any]) -> set[Any]:
        return {f for f in pending if f.done()}

    def wait_first(self, pending: Iterable[Any]) -> set[Any]:
        done, _ = self._wait(list(pending), return_when="FIRST_COMPLETED")
        return set(done)

    def flush(self) -> None:
        pass

    def task_times(self, future: Any) -> tuple[float, float] | None:
        return None

    def loop_stats(self) -> dict[str, float]:
        return {}

    def loop_costs(self, before: dict[str, float]) -> dict[str, float]:
        return {}


class CommandTasks(Protocol):
    """What a batch runner takes from a workload: its task as a command line, its parameters."""

    name: ClassVar[str]
    p: dict[str, Any]

    def command(self) -> list[str]:
        """The task as argv."""
        ...
