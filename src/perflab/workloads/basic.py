"""The basic synthetic tasks: no-op, sleep, CPU busy loop, and a hang for failure tests."""

from __future__ import annotations

import signal
import threading
import time
from collections.abc import Callable
from typing import Any

from perflab.options import Opt
from perflab.workloads import WORKLOADS
from perflab.workloads.base import Workload, parallel_ideal

NOOP_RESULT = 7


def noop_task(payload: str) -> int:
    return NOOP_RESULT


def sleep_task(ms: float) -> int:
    time.sleep(ms / 1000.0)
    return NOOP_RESULT


def cpu_task(us: float) -> int:
    end = time.perf_counter() + us / 1e6
    n = 0
    while time.perf_counter() < end:
        n += 1
    return NOOP_RESULT


def hang_task(ignore_term: bool) -> int:
    if ignore_term and threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    while True:
        time.sleep(3600)


@WORKLOADS.register
class Noop(Workload):
    """Returns a constant: the cost measured is the task system's alone (parsl-perf's app)."""

    name = "noop"
    params = {"arg_bytes": Opt(default=0, help="Bytes of the argument each task is sent.")}

    def function(self) -> Callable[..., Any]:
        return noop_task

    def args(self) -> tuple[Any, ...]:
        return ("x" * int(self.p["arg_bytes"]),)

    def check(self, result: Any) -> bool:
        return bool(result == NOOP_RESULT)

    def command(self) -> list[str]:
        return ["/bin/true"]


@WORKLOADS.register
class Sleep(Workload):
    """Sleeps ``task_ms``: the system's overhead on top of known idle task time."""

    name = "sleep"
    params = {"task_ms": Opt(default=10.0, help="How long each task sleeps (ms).")}

    def function(self) -> Callable[..., Any]:
        return sleep_task

    #: Sleeping needs no core: the workers alone bound the ideal time.
    uses_cores = False

    def args(self) -> tuple[Any, ...]:
        return (float(self.p["task_ms"]),)

    def command(self) -> list[str]:
        return ["/bin/sleep", f"{float(self.p['task_ms']) / 1000:g}"]

    def ideal_s(self, results: list[Any], slots: int) -> float | None:
        t = float(self.p["task_ms"]) / 1000.0
        return parallel_ideal(len(results) * t, t, slots)


@WORKLOADS.register
class Cpu(Workload):
    """Busy-loops ``task_us`` microseconds: competes with the task system for the cores."""

    name = "cpu"
    params = {"task_us": Opt(default=100.0, help="How long each task computes (µs).")}

    def function(self) -> Callable[..., Any]:
        return cpu_task

    def args(self) -> tuple[Any, ...]:
        return (float(self.p["task_us"]),)

    def ideal_s(self, results: list[Any], slots: int) -> float | None:
        # A deadline spin: under contention it over-states the work done (use `compute`).
        t = float(self.p["task_us"]) / 1e6
        return parallel_ideal(len(results) * t, t, slots)


@WORKLOADS.register
class Hang(Workload):
    """Never returns (optionally ignoring SIGTERM): for testing timeouts and cleanup."""

    name = "hang"
    params = {
        "ignore_term": Opt(choices=(0, 1), default=0, help="1: the task ignores SIGTERM too.")
    }

    def function(self) -> Callable[..., Any]:
        return hang_task

    def args(self) -> tuple[Any, ...]:
        return (bool(self.p["ignore_term"]),)
