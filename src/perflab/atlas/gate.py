"""The atlas's clock and its gate: ``--max-time`` as a clock every unit of work checks, and
each paired comparison kept in the store once made (an update resumed repeats none)."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from perflab.atlas.measure import Measurer
from perflab.atlas.project import Benchmark
from perflab.atlas.store import Store


class OutOfTime(Exception):
    """``--max-time`` is spent: what is left waits for the next update."""


@dataclass
class Clock:
    max_time_s: float | None
    t0: float = field(default_factory=time.monotonic)

    def check(self) -> None:
        """OutOfTime once ``max_time_s`` has passed since the clock started."""
        if self.max_time_s is not None and time.monotonic() - self.t0 >= self.max_time_s:
            raise OutOfTime


def compare(store: Store, m: Measurer, bench: Benchmark, a: str, b: str, level: float,
            min_effect: float, clock: Clock,
            n_max: int | None = None) -> dict[str, Any]:  # fmt: skip
    """The gate between points a and b at ``level`` (up to ``n_max`` runs a side, default
    the gate's): kept in the store once made."""
    key = f"{bench.name}:{a}..{b}@{level:.8g}" + (f"/{n_max}" if n_max is not None else "")
    kept = store.comparison(key)
    if kept is not None:
        return kept
    clock.check()
    result = m.compare(bench, a, b, level, min_effect, n_max)
    store.keep_comparison(key, bench.name, result)
    return result
