"""Task dependencies as a wrapper around any executor (:class:`Dependent`).

An engine says how it can express dependencies (``Executor.dependencies``): ``"native"``
engines (Parsl, Dask) resolve futures given as arguments themselves; for the others
(concurrent.futures pools) futures are chained by callbacks here. A dependent task is
submitted only when all its inputs are done; their results become its trailing arguments.
Callbacks run on the engine's own threads (for a ProcessPoolExecutor, its manager thread,
which must not block on its own submit), so they only hand the ready task to one dispatcher
thread that submits it.
"""

from __future__ import annotations

import concurrent.futures
import queue
import threading
from collections.abc import Callable
from typing import Any

from perflab.errors import PerflabError
from perflab.tasks import Executor

_Ready = tuple[Callable[..., Any], tuple[Any, ...], list[Any], concurrent.futures.Future[Any]]


class Chainer:
    """Submits ``fn(*args, *results of deps)`` through ``submit`` once ``deps`` are done."""

    def __init__(self, submit: Callable[..., Any]) -> None:
        self._submit = submit
        self._ready: queue.Queue[_Ready | None] = queue.Queue()
        self._thread = threading.Thread(target=self._dispatch, name="perflab-chain", daemon=True)
        self._thread.start()

    def submit_after(
        self, fn: Callable[..., Any], deps: list[Any], *args: Any
    ) -> concurrent.futures.Future[Any]:
        proxy: concurrent.futures.Future[Any] = concurrent.futures.Future()
        if not deps:
            self._ready.put((fn, args, [], proxy))
            return proxy
        remaining = [len(deps)]
        lock = threading.Lock()

        def one_done(_: Any) -> None:
            with lock:
                remaining[0] -= 1
                last = remaining[0] == 0
            if last:
                self._ready.put((fn, args, deps, proxy))

        for d in deps:
            d.add_done_callback(one_done)
        return proxy

    def _dispatch(self) -> None:
        while (item := self._ready.get()) is not None:
            fn, args, deps, proxy = item
            try:
                inner = self._submit(fn, *args, *[d.result() for d in deps])
            except BaseException as exc:  # a failed input fails its dependants, like Parsl
                proxy.set_exception(exc)
                continue
            inner.add_done_callback(lambda f, p=proxy: _copy(f, p))

    def close(self) -> None:
        self._ready.put(None)
        self._thread.join(timeout=5)


def _copy(src: Any, dst: concurrent.futures.Future[Any]) -> None:
    exc = src.exception()
    if exc is not None:
        dst.set_exception(exc)
    else:
        dst.set_result(src.result())


class Dependent:
    """``executor`` with ``submit_after``; ``close()`` when the graph has been collected."""

    def __init__(self, executor: Executor) -> None:
        self._submit = executor.submit
        self._chain: Chainer | None = None
        if executor.dependencies == "callbacks":
            self._chain = Chainer(executor.submit)
        elif executor.dependencies != "native":
            name = getattr(executor, "name", type(executor).__name__)
            raise PerflabError(f"engine {name!r} cannot express task dependencies")

    def submit_after(self, fn: Callable[..., Any], deps: list[Any], *args: Any) -> Any:
        """Submit ``fn(*args, *results of deps)`` to run once every future in ``deps`` is done."""
        if self._chain is None:
            return self._submit(fn, *args, *deps)
        return self._chain.submit_after(fn, deps, *args)

    def close(self) -> None:
        if self._chain is not None:
            self._chain.close()
