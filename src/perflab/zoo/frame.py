"""Zoo runs as a frame for the analysis (one row per run)."""

from __future__ import annotations

from typing import Any

import pandas as pd

from perflab.run.record import RunRecord
from perflab.workloads import WORKLOADS
from perflab.workloads.dag import DagWorkload

COLUMNS = [
    "run_id",
    "target",
    "kind",
    "workload",
    "task_us",
    "tasks",
    "wall_s",
    "ideal_s",
    "efficiency",
    "tasks_per_s",
    "slots",
    "latency_per_level_s",
    "recipe",
    "size",
    "overhead_s",
    "lower_bound_s",
    "queue_delay_p50_s",
    "queue_delay_p90_s",
    "status",
    "error",
]


def zoo_frame(records: list[RunRecord]) -> pd.DataFrame:
    rows: list[dict[str, Any]] = []
    for r in records:
        m = r.measurement
        details = m.get("workload") or {}
        workload = r.workload or ""
        is_dag = workload in WORKLOADS and issubclass(WORKLOADS.get(workload), DagWorkload)
        rows.append(
            {
                "run_id": r.run_id,
                "target": r.target,
                "kind": workload if is_dag else "metg" if workload == "compute" else workload,
                "workload": workload,
                "task_us": float(r.params.get("task_us", 0.0)),
                "tasks": r.tasks,
                "wall_s": r.wall_s,
                "ideal_s": m.get("ideal_s"),
                "efficiency": m.get("efficiency"),
                "tasks_per_s": r.tasks_per_s,
                "slots": details.get("slots"),
                "latency_per_level_s": details.get("latency_per_level_s"),
                # workflow runs (wfcommons): which instance, and its overhead vs the ideal
                "recipe": r.params.get("recipe"),
                "size": r.params.get("size"),
                "overhead_s": details.get("overhead_s"),
                "lower_bound_s": details.get("lower_bound_s"),
                "queue_delay_p50_s": details.get("queue_delay_p50_s"),
                "queue_delay_p90_s": details.get("queue_delay_p90_s"),
                "status": r.status,
                "error": (r.error or "").strip().splitlines()[-1] if r.error else None,
            }
        )
    return pd.DataFrame(rows, columns=COLUMNS)
