"""The run record: a stable contract (docs/contracts.md), one JSON object per run."""

from __future__ import annotations

import dataclasses
import json
import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypedDict

if TYPE_CHECKING:
    from perflab.spec import RunSpec

STATUSES = ("ok", "failed", "timeout")

#: Metric columns, in the order they are exported.
METRICS = (
    "tasks",
    "wall_s",
    "us_per_task",
    "tasks_per_s",
    "first_result_s",
    "submit_s",
    "cpu_user_s",
    "cpu_sys_s",
    "utilization",
    "peak_rss_bytes",
    "ctx_switches",
    "write_bytes",
    "log_bytes",
)

#: The unit each metric's numbers are printed with (``metric_unit``): the one place a
#: label such as "µs/task" is tied to its metric, so ``analyze --metric wall_s`` says "s".
METRIC_UNITS = {
    "tasks": "tasks",
    "wall_s": "s",
    "us_per_task": "µs/task",
    "tasks_per_s": "tasks/s",
    "first_result_s": "s",
    "submit_s": "s",
    "cpu_user_s": "s",
    "cpu_sys_s": "s",
    "utilization": "utilization",
    "peak_rss_bytes": "bytes",
    "ctx_switches": "switches",
    "write_bytes": "bytes",
    "log_bytes": "bytes",
}


def metric_unit(metric: str) -> str:
    """The unit ``metric``'s numbers are printed with ("µs/task", "s", …); a metric perflab
    does not know (a column of an imported CSV) is named instead."""
    return METRIC_UNITS.get(metric, metric)


#: Metrics where a larger value is better; every other metric is a cost (lower is better).
HIGHER_IS_BETTER = frozenset({"tasks_per_s"})

#: Each metric's sign rule: time-like scores and rates must be > 0 (a run cannot take no
#: time), counts and resources >= 0. Every value must be finite. Black-box scores and
#: imported CSVs are held to the same rules.
POSITIVE_METRICS = frozenset({"wall_s", "us_per_task", "tasks_per_s"})
INTEGER_METRICS = frozenset({"tasks", "peak_rss_bytes", "ctx_switches", "write_bytes", "log_bytes"})


def metric_problem(name: str, value: float) -> str | None:
    """Why ``value`` cannot be metric ``name`` (None if it can)."""
    if not math.isfinite(value):
        return f"{name} {value!r} is not a finite number"
    if name in POSITIVE_METRICS and not value > 0:
        return f"{name} {value!r} is impossible: it must be > 0"
    if value < 0:
        return f"{name} {value!r} is impossible: it must be >= 0"
    if name in INTEGER_METRICS and value > 2**62:
        return f"{name} {value!r} is too large"
    return None


#: The dataset CSV's leading columns (docs/contracts.md); one 0/1 column per factor follows.
DATASET_COLUMNS = ["run_id", "timestamp", "status", *METRICS, "treatments"]


class Measurement(TypedDict, total=False):
    """A record's ``measurement``: how its metrics were obtained and what the supervisor saw
    (docs/contracts.md). A plain JSON object in the record (a run has only the keys that
    apply to it, in the order they were found); this names the keys and their types."""

    #: Where the counters came from (e.g. ``subreaper+rusage+procfs``).
    source: str | None
    #: The run's private directory (None once it is removed after a good run).
    run_dir: str | None
    outlived: list[Any]
    survivors: list[Any]
    #: ``[pid, start time]`` of every process the supervisor saw in the tree.
    pids_seen: list[Any]
    processes: list[Any]
    returncode: int | None
    #: Which process measured: ``{"host", "pid"}`` (the driver or a scale-out worker).
    measured_by: dict[str, Any]
    #: The machine's fault (a full disk ...): a campaign keeps the run as unmeasured.
    infrastructure: str
    window_s: float
    batches: list[dict[str, Any]]
    submit_side_cpu_s: float
    submit_side_maxrss_bytes: int
    window_splits: list[dict[str, Any]]
    ideal_s: float
    efficiency: float | None
    #: The workload's own facts (slots, DAG depth ...), or what its own loop saw.
    workload: dict[str, Any]
    warmup_tasks: int
    #: ``graceful`` or ``killed`` (the tree ended once the result was written).
    teardown: str
    #: A black-box command's: its wall time, a score it did not print, the hook's proof.
    command_wall_s: float
    bad_score: bool
    score_from: str
    score: None
    task_count: dict[str, Any]
    program_logs: dict[str, Any]
    treated: dict[str, Any]
    not_treated: list[str]
    #: The run's own releases (``name==version``) as each process imported them, and the
    #: imports of another release (which fail the run).
    releases: dict[str, list[dict[str, Any]]]
    wrong_release: list[str]
    #: What ``prepare`` made for the run.
    patched_tree: str | None
    transformed: list[dict[str, Any]]
    #: ``--isolate``: the run's cgroup(s), weight, cpus, and ``/proc/PID/cgroup`` of its main
    #: process as read back (run/isolate.py).
    isolation: dict[str, Any]
    #: Seconds per phase of the run, and their total.
    phases: dict[str, float]
    #: A profiled run's kinds and tracer (never stored with timing runs).
    profile: dict[str, Any]
    #: An imported CSV's file and line.
    imported_from: str
    line: int


@dataclass(frozen=True)
class RunRecord:
    """One measured run. Metrics are None when the run did not produce them."""

    run_id: str
    started_at: str
    ended_at: str
    target: str
    workload: str | None
    status: str
    campaign: str | None = None
    params: dict[str, Any] = field(default_factory=dict)
    treatments: list[str] = field(default_factory=list)
    error: str | None = None
    tasks: int | None = None
    wall_s: float | None = None
    us_per_task: float | None = None
    tasks_per_s: float | None = None
    first_result_s: float | None = None
    submit_s: float | None = None
    cpu_user_s: float | None = None
    cpu_sys_s: float | None = None
    utilization: float | None = None
    peak_rss_bytes: int | None = None
    ctx_switches: int | None = None
    write_bytes: int | None = None
    log_bytes: int | None = None
    #: How the metrics were obtained (e.g. which CPU accounting source), and what the
    #: supervisor saw: processes that outlived the run, the measured window, the run dir.
    measurement: Measurement = field(default_factory=lambda: Measurement())
    env: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), sort_keys=False)

    @classmethod
    def of(cls, spec: RunSpec, run_id: str, status: str, started_at: str, ended_at: str,
           **fields: Any) -> RunRecord:  # fmt: skip
        """A record of a run of ``spec``: what ran (campaign, target, workload, parameters,
        treatments, as the spec says) and ``fields``."""
        return cls(
            run_id=run_id, started_at=started_at, ended_at=ended_at, target=spec.target,
            workload=spec.workload, status=status, campaign=spec.campaign,
            params=dict(spec.params), treatments=sorted(spec.treatments), **fields,
        )  # fmt: skip

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RunRecord:
        names = {f.name for f in dataclasses.fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in names})
