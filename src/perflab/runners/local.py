"""The local runner: one run at a time on this machine (runs must not share a machine)."""

from __future__ import annotations

import time
from typing import Any

from perflab.measure import measure
from perflab.spec import RunSpec
from perflab.store import Store


def run_local(
    store: Store, pending: list[tuple[int, RunSpec]], deadline: float | None, on_result: Any
) -> None:
    total = len(pending)
    for i, (seq, spec) in enumerate(pending, 1):
        if deadline is not None and time.monotonic() > deadline:
            return
        record = measure(spec)
        store.add_run(record, seq)
        if on_result:
            on_result(record, i, total)
