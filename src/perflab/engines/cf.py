"""concurrent.futures pools: the floor any task system is compared against."""

from __future__ import annotations

import concurrent.futures
from collections.abc import Callable
from typing import Any

from perflab.engines import ENGINES
from perflab.engines.base import ExecutorEngine


class _PoolEngine(ExecutorEngine):
    dependencies = "callbacks"
    pool_class: Callable[..., concurrent.futures.Executor]
    pool: concurrent.futures.Executor

    def start(self) -> None:
        self.pool = self.pool_class(max_workers=int(self.opts["workers"]))

    def submit(self, fn: Callable[..., Any], *args: Any) -> Any:
        return self.pool.submit(fn, *args)

    def shutdown(self) -> None:
        self.pool.shutdown(wait=True, cancel_futures=True)

    def abandonable(self) -> bool:
        """The pool lives in the measured process (and its children): nothing of its
        shutdown is recorded, so the tree may be killed after the last window."""
        return True


@ENGINES.register
class ThreadsEngine(_PoolEngine):
    name = "cf-threads"
    pool_class = concurrent.futures.ThreadPoolExecutor


@ENGINES.register
class ProcessesEngine(_PoolEngine):
    name = "cf-processes"
    pool_class = concurrent.futures.ProcessPoolExecutor
