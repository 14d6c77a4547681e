"""The runner interface: measure pending runs somewhere and hand each record to the store."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar

from perflab.campaign.store import Store
from perflab.options import Opt, check_options
from perflab.run.record import RunRecord
from perflab.spec import RunSpec

#: Called after each stored run with (record, index, total).
OnResult = Callable[[RunRecord, int, int], None]


@dataclass
class Work:
    """One call's pending runs ``(seq, spec)``, the store their records go to, the duration
    budget's end (``time.monotonic()``) and whom to tell of each stored run."""

    store: Store
    pending: list[tuple[int, RunSpec]]
    deadline: float | None
    on_result: OnResult | None
    #: Runs finished so far (what ``on_result`` is told).
    finished: int = 0

    def over(self) -> bool:
        """Whether the budget is spent: no run is started after it."""
        return self.deadline is not None and time.monotonic() > self.deadline

    def finish(self, record: RunRecord, seq: int) -> bool:
        """Store a run's record and tell ``on_result``; True for an attempt an
        infrastructure failure spoiled (``store_result``)."""
        unmeasured = store_result(self.store, record, seq)
        self.finished += 1
        if self.on_result:
            self.on_result(record, self.finished, len(self.pending))
        return unmeasured


class Runner:
    """Measures a campaign's pending runs. The driver's process is the store's only writer:
    a runner stores each record as soon as it is back, so a killed driver loses at most the
    runs in flight. ``options`` declares the accepted options (``Opt``); ``execute`` measures
    the runs."""

    name: ClassVar[str] = ""
    options: ClassVar[dict[str, Opt]] = {}

    def __init__(self, **options: Any) -> None:
        given = {k: v for k, v in options.items() if v is not None}
        self.opts = check_options(given, self.options, f"runner {self.name!r}")

    def run(
        self,
        store: Store,
        pending: list[tuple[int, RunSpec]],
        deadline: float | None,
        on_result: OnResult | None,
    ) -> None:
        """Measure ``pending`` (the campaign driver's call), stopping at ``deadline``."""
        self.execute(Work(store, pending, deadline, on_result))

    def execute(self, work: Work) -> None:
        """Measure the work's runs, each record handed to ``work.finish`` once it is back;
        start none once ``work.over()``."""
        raise NotImplementedError


def store_result(store: Store, record: RunRecord, seq: int) -> bool:
    """Store a finished run; an attempt that an infrastructure failure spoiled (disk full, a
    lost file) is kept apart as unmeasured, so the run stays pending for the next resume.
    Returns True for such an attempt."""
    cause = record.measurement.get("infrastructure")
    if cause:
        store.add_unmeasured(record, seq, str(cause))
        return True
    store.add_run(record, seq)
    return False
