"""The job-submission study as perflab runs: the job-submission table, the job-service and
endpoint scaling curves, and the pub/sub event-rate curve with and without channel sharding.

Every point is an ordinary measured run (``measure``), so it has the whole record: jobs/s
(tasks/s: a task is a job, or a received event), real time, user and sys CPU of the whole
process tree (wrapper shells, sshd and its sessions, redis-server, client processes).
"""

from __future__ import annotations

import re
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from perflab.errors import PerflabError
from perflab.factors.catalog import load_catalogs
from perflab.factors.treat import treat
from perflab.run.measure import measure, validate
from perflab.run.record import RunRecord
from perflab.spec import RunSpec


@dataclass
class Row:
    """One line of the table: what ran here, and the original study's figures for it."""

    id: str
    label: str
    spec: RunSpec
    #: the original study's row: (jobs/s, real s, sys s, user s, utilisation %), for 1,000 jobs
    seed: tuple[float, float, float, float, float] | None
    records: list[RunRecord] = field(default_factory=list)

    def median(self, metric: str) -> float | None:
        values = [getattr(r, metric) for r in self.records if r.status == "ok"]
        values = [float(v) for v in values if v is not None]
        return statistics.median(values) if values else None


SEED_ROWS: dict[str, tuple[float, float, float, float, float]] = {
    "1": (5000.0, 0.2, 0.0, 0.1, 58.7),
    "2": (87.7, 11.4, 0.2, 0.8, 9.2),
    "4": (57.8, 17.3, 8.1, 0.8, 51.2),
    "5": (56.8, 17.6, 8.2, 0.8, 51.3),
    "6": (56.8, 17.6, 8.2, 0.8, 50.7),
    # the original bulk row ran against a remote host (200 ms away); here it is localhost
    "9": (23.4, 42.8, 6.2, 0.7, 16.2),
}
SEED_COLUMNS = ("jobs_per_s", "real_s", "sys_s", "user_s", "util_pct")
FLUSH_PATCH = "src_saga_flush_nowait"
FIFO_PATCH = "src_saga_wrapper_fifo"


def _spec(target: str, jobs: int, warmup: int, timeout_s: float, **opts: Any) -> RunSpec:
    return RunSpec(
        target=target,
        workload="noop",
        tasks=jobs,
        warmup=warmup,
        engine_options={k: str(v) for k, v in opts.items()},
        timeout_s=timeout_s,
    )


#: The table's rows: id, label, target, jobs kind ("shell" or "saga"), engine options.
TABLE = (
    ("1", "shell raw: /bin/true &", "shell", "shell", {"mode": "raw"}),
    ("2", "shell wrapper: RUN /bin/true", "shell", "shell", {"mode": "wrapper"}),
    ("4", "saga fork:// create_job+run", "saga", "saga", {"endpoint": "fork"}),
    ("5", "saga fork:// run_job", "saga", "saga", {"endpoint": "fork", "mode": "run_job"}),
    ("6", "saga ssh://localhost create_job+run", "saga", "saga", {"endpoint": "ssh"}),
    (
        "9",
        "saga ssh://localhost bulk Container",
        "saga",
        "saga",
        {"endpoint": "ssh", "mode": "bulk"},
    ),
)


def table_rows(
    shell_jobs: int = 500, saga_jobs: int = 40, timeout_s: float = 300.0, patched: bool = True
) -> list[Row]:
    """The table's rows 1, 2, 4, 5, 6 and 9 (plus ``4p``: row 4 with the flush and fifo
    patches, and ``9p``: row 9 with the wrapper's fifo race fixed)."""
    rows = []
    for rid, label, target, kind, opts in TABLE:
        jobs, warmup = (shell_jobs, 20) if kind == "shell" else (saga_jobs, 3)
        rows.append(Row(rid, label, _spec(target, jobs, warmup, timeout_s, **opts), SEED_ROWS[rid]))
    if patched:
        rows.append(Row("4p", "row 4, both patches", with_flush_patch(rows[2].spec), None))
        fifo = treat(rows[5].spec, FIFO_PATCH, load_catalogs())
        rows.append(Row("9p", "row 9, fifo patch", fifo, None))
    return rows


def with_flush_patch(spec: RunSpec) -> RunSpec:
    """``spec`` treated with the patch that removes saga's 0.1 s flush wait, and with the
    wrapper's fifo race fixed: without the wait, that race makes submissions fail."""
    return treat(spec, [FLUSH_PATCH, FIFO_PATCH], load_catalogs())


def run_rows(
    rows: list[Row], repeat: int = 1, progress: Callable[[str], None] | None = None
) -> list[Row]:
    """Measure each row ``repeat`` times, interleaved (row order within each round)."""
    if repeat < 1:
        raise PerflabError(f"--repeat must be at least 1 (got {repeat})")
    for row in rows:  # every row checked before the first starts: a refusal is one line
        validate(row.spec)
    for r in range(repeat):
        for row in rows:
            if progress:
                progress(f"round {r + 1}/{repeat}: {row.id} {row.label}")
            row.records.append(measure(row.spec))
    return rows


def cause(error: str | None) -> str:
    """The line of a failed run's error that names the exception, else its last line."""
    lines = [ln.strip() for ln in (error or "").splitlines() if ln.strip()]
    named = [ln for ln in lines if re.match(r"^[\w.]+(Error|Failed|Exception|Success)\b", ln)]
    return (named or lines or [""])[-1]


def seed_utilization(rec: RunRecord) -> float | None:
    """The original study's utilisation: tree CPU (user + sys) over real time, in % of one
    core (perflab's ``utilization`` also divides by the number of cores)."""
    if rec.status != "ok" or not rec.wall_s or rec.cpu_user_s is None or rec.cpu_sys_s is None:
        return None
    return 100 * (rec.cpu_user_s + rec.cpu_sys_s) / rec.wall_s


def table(rows: Sequence[Row]) -> list[dict[str, Any]]:
    """The table: medians over each row's ok runs, beside the original study's figures."""
    out = []
    for row in rows:
        utils = [u for u in map(seed_utilization, row.records) if u is not None]
        failed = [r for r in row.records if r.status != "ok"]
        out.append(
            {
                "id": row.id,
                "type": row.label,
                "jobs": row.spec.tasks,
                "jobs_per_s": row.median("tasks_per_s"),
                "real_s": row.median("wall_s"),
                "sys_s": row.median("cpu_sys_s"),
                "user_s": row.median("cpu_user_s"),
                "util_pct": statistics.median(utils) if utils else None,
                "runs": len(row.records),
                "failed": len(failed),
                "error": cause(failed[0].error) if failed else None,
                "seed": dict(zip(SEED_COLUMNS, row.seed, strict=True)) if row.seed else None,
            }
        )
    return out


def curve_specs(
    kind: str, levels: Sequence[int], jobs: int, timeout_s: float, **fixed: Any
) -> list[tuple[dict[str, Any], RunSpec]]:
    """Points of one scaling curve: ``services`` (saga job services, one thread each),
    ``endpoints`` (sshd ports, ``per_endpoint`` services each), or
    ``clients`` (redis pub/sub publishers, with ``shards``)."""
    points = []
    for level in levels:
        if kind == "services":
            opts = {"endpoint": "fork", "mode": "create_job", **fixed, "services": level}
            target, warmup, key = "saga", 3, {"services": level}
        elif kind == "endpoints":
            per = int(fixed.get("per_endpoint", 2))
            rest = {k: v for k, v in fixed.items() if k != "per_endpoint"}
            opts = {"endpoint": "ssh", **rest, "endpoints": level, "services": level * per}
            target, warmup, key = "saga", 3, {"endpoints": level, "services": level * per}
        elif kind == "clients":
            opts = {"shards": 1, **fixed, "clients": level}
            target, warmup, key = "redis-pubsub", 200, {"clients": level, "shards": opts["shards"]}
        else:
            raise PerflabError(f"unknown curve {kind!r} (services, endpoints, clients)")
        points.append((key, _spec(target, jobs, warmup, timeout_s, **opts)))
    return points


def run_curve(
    points: Sequence[tuple[dict[str, Any], RunSpec]],
    repeat: int = 1,
    progress: Callable[[str], None] | None = None,
) -> list[dict[str, Any]]:
    """Measure each point ``repeat`` times (rounds over all points, so drift spreads) and
    return one row per point: its levels, the median rate, every run's rate and status."""
    if repeat < 1:
        raise PerflabError(f"--repeat must be at least 1 (got {repeat})")
    for _, spec in points:
        validate(spec)
    records: list[list[RunRecord]] = [[] for _ in points]
    for r in range(repeat):
        for i, (levels, spec) in enumerate(points):
            if progress:
                progress(f"round {r + 1}/{repeat}: {spec.target} {levels}")
            records[i].append(measure(spec))
    rows = []
    for (levels, spec), recs in zip(points, records, strict=True):
        ok = [x for x in recs if x.status == "ok" and x.tasks_per_s]
        rates = [float(x.tasks_per_s) for x in ok if x.tasks_per_s]
        # a failed run's wall time (its timeout, say) is not a measurement of the point
        walls = [float(x.wall_s) for x in ok if x.wall_s]
        rows.append(
            {
                **levels,
                "target": spec.target,
                "rate": statistics.median(rates) if rates else None,
                "rates": rates,
                "real_s": statistics.median(walls) if walls else None,
                "failed": [x.error for x in recs if x.status != "ok"],
                "run_ids": [x.run_id for x in recs],
            }
        )
    return rows
