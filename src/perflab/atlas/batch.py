"""The series' runs through a campaign runner (``[atlas] runner``, or ``atlas update --runner``):
with ``parsl`` and a Parsl config whose ``SlurmProvider`` gives each worker a node
(docs/slurm.md), every pending run of every point is sent at once, so a cluster measures many
commits at the same time; each record is kept in the atlas's store as it comes back. The
paired gate stays on this machine: its two sides' runs alternate (ABBA) and are paired only
when they share one machine."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, cast

from perflab.atlas.measure import Failed, RealMeasurer, value_of
from perflab.atlas.project import Atlas, Benchmark
from perflab.atlas.store import Store
from perflab.campaign.runners import RUNNERS, Runner
from perflab.run.record import RunRecord
from perflab.spec import RunSpec


def runner_for(atlas: Atlas, name: str | None, config: str | None) -> Runner | None:
    """The runner the update's flags (else the project file) name, its config checked now,
    before anything is stored; None for this machine's own one-at-a-time runs."""
    name = name or atlas.runner
    if name in (None, "local"):
        return None
    return RUNNERS.get(str(name))(parsl_config=config or atlas.runner_config)


@dataclass
class _Sink:
    """The runner's store: each record back is a run of its point, or the point's failure."""

    store: Store
    bench: Benchmark
    keys: dict[int, str]
    skip: Callable[[Failed], None]
    where: dict[str, int] = field(default_factory=dict)
    unmeasured: int = 0

    def add_run(self, record: RunRecord, seq: int) -> None:
        key = self.keys[seq]
        runner = record.env.get("runner") or {}
        place = "/".join(str(runner.get(k) or "?") for k in ("provider", "scheduler"))
        self.where[place] = self.where.get(place, 0) + 1
        try:
            self.store.add_run(self.bench.name, key, value_of(record, self.bench, key))
        except Failed as f:
            self.skip(f)

    def add_unmeasured(self, record: RunRecord, seq: int, cause: str) -> None:
        # an attempt an infrastructure failure spoiled: the point stays short of its runs
        # and the next update measures it again
        self.unmeasured += 1


def measure_points(
    store: Store,
    bench: Benchmark,
    m: RealMeasurer,
    runner: Runner,
    todo: list[tuple[str, int]],
    deadline: float | None,
    skip: Callable[[Failed], None],
) -> dict[str, Any]:
    """Send ``todo`` (point, runs it lacks) through ``runner``: each point's tree is built
    here first (one that does not build is skipped, ``skip``), the runs go out together and
    are stored as they come back. Returns where they ran ({provider/scheduler: runs}) and
    how many attempts came back unmeasured."""
    pending: list[tuple[int, RunSpec]] = []
    keys: dict[int, str] = {}
    for key, need in todo:
        try:
            m.prepared(bench, key)  # built here: the workers find it in perflab's cache
            spec = m.spec(bench, key)
        except Failed as f:
            skip(f)
            continue
        for _ in range(need):
            keys[len(pending)] = key
            pending.append((len(pending), spec))
    sink = _Sink(store, bench, keys, skip)
    if pending and (deadline is None or time.monotonic() < deadline):
        # the runners' interface is the campaign store's; the sink has the two calls they make
        runner.run(cast(Any, sink), pending, deadline, None)
    return {"where": sink.where, "unmeasured": sink.unmeasured, "sent": len(pending)}
