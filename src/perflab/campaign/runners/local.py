"""The local runner: one run at a time on this machine (runs must not share a machine)."""

from __future__ import annotations

import time

from perflab.campaign.runners import RUNNERS
from perflab.campaign.runners.base import OnResult, Runner, store_result
from perflab.campaign.store import Store
from perflab.run.measure import measure
from perflab.spec import RunSpec


@RUNNERS.register
class LocalRunner(Runner):
    name = "local"

    def run(
        self,
        store: Store,
        pending: list[tuple[int, RunSpec]],
        deadline: float | None,
        on_result: OnResult | None,
    ) -> None:
        total = len(pending)
        for i, (seq, spec) in enumerate(pending, 1):
            if deadline is not None and time.monotonic() > deadline:
                return
            record = measure(spec)
            unmeasured = store_result(store, record, seq)
            if on_result:
                on_result(record, i, total)
            if unmeasured:  # the next runs would meet the same full disk: stop, resume later
                return
