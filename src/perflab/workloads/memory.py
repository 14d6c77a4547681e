"""``memory``: each task allocates ``mb`` MiB, touches every page, and frees it.

The cost shows in the record's ``peak_rss_bytes`` (up to workers × mb above the engine's
own footprint); the ideal time is the tasks' own measured time spread over the cores.
"""

from __future__ import annotations

import mmap
import time
from collections.abc import Callable
from typing import Any

from perflab.options import Opt
from perflab.workloads import WORKLOADS
from perflab.workloads.base import Workload, parallel_ideal


def memory_task(nbytes: int, hold_ms: float) -> float:
    t0 = time.perf_counter()
    buf = bytearray(nbytes)
    # bytearray's zeroed pages may be mapped lazily: write one byte per page so each is
    # really resident.
    step = mmap.PAGESIZE
    for i in range(0, nbytes, step):
        buf[i] = 1
    if hold_ms:
        time.sleep(hold_ms / 1000.0)
    touched = sum(buf[::step])
    del buf
    if touched != (nbytes + step - 1) // step:
        raise RuntimeError("memory task lost a page")
    return time.perf_counter() - t0


@WORKLOADS.register
class Memory(Workload):
    name = "memory"
    params = {
        "mb": Opt(default=64, help="MiB each task allocates and touches."),
        "hold_ms": Opt(default=0.0, help="How long each task holds it (ms)."),
    }

    def function(self) -> Callable[..., Any]:
        return memory_task

    def args(self) -> tuple[Any, ...]:
        return (int(self.p["mb"]) * 1024 * 1024, float(self.p["hold_ms"]))

    def check(self, result: Any) -> bool:
        return isinstance(result, float)

    def ideal_s(self, results: list[Any], slots: int) -> float | None:
        return parallel_ideal(sum(results), max(results, default=0.0), slots)

    def details(self, results: list[Any], wall_s: float, slots: int) -> dict[str, Any]:
        return {"bytes_touched": len(results) * int(self.p["mb"]) * 1024 * 1024}
