"""The zoo's workflow rows: the table from runs, the page and figure, and bad input."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from conftest import perflab
from perflab.analysis.zoo import workflow_rows, zoo_table
from perflab.campaign.store import Store
from perflab.report.zoo import write_zoo_report


def _runs() -> pd.DataFrame:
    rows = []
    for target, over in (("dask", 0.5), ("parsl-htex", 0.2)):
        for size, ideal in ((100, 0.5), (1000, 5.0)):
            for rep in range(3):
                wall = ideal + over + 0.01 * rep
                rows.append(
                    {"target": target, "kind": "wfcommons", "workload": "wfcommons",
                     "recipe": "montage", "size": size, "tasks": size - 4, "wall_s": wall,
                     "ideal_s": ideal, "overhead_s": wall - ideal, "efficiency": ideal / wall,
                     "queue_delay_p50_s": 0.001, "queue_delay_p90_s": 0.01, "status": "ok",
                     "error": None, "task_us": 0.0}
                )  # fmt: skip
    return pd.DataFrame(rows)


def test_workflow_rows_have_makespan_overhead_and_efficiency_with_intervals(
    tmp_path: Path,
) -> None:
    table = zoo_table(_runs())
    rows = workflow_rows(table)
    assert [(r["target"], r["workflow"]) for r in rows] == [
        ("dask", "montage-100"), ("dask", "montage-1000"),
        ("parsl-htex", "montage-100"), ("parsl-htex", "montage-1000"),
    ]  # fmt: skip
    r = rows[0]
    assert r["overhead_s"] == pytest.approx(0.51)
    lo, hi = r["efficiency_ci"]
    assert lo < r["efficiency"] < hi
    page = write_zoo_report(table, [], tmp_path, "wf").read_text()
    assert "montage-1000" in page and "Workflows (WfCommons)" in page
    assert (tmp_path / "figures" / "zoo_workflows.svg").exists()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--recipes", "spiral"], "recipe 'spiral' is not one of"),
        (["--wf-sizes", "10"], "Cannot create synthetic graph with 10"),
        (["--wf-sizes", "ten"], "--wf-sizes: 'ten' is not a number"),
        (["--targets", "shell"], "job engines cannot run it"),
        (["--targets", "redis-pubsub"], "needs task dependencies, which engine 'redis-pubsub'"),
    ],
)
def test_bad_workflow_rows_exit_2_and_store_nothing(
    tmp_path: Path, args: list[str], message: str
) -> None:
    r = perflab("zoo", "--workloads", "wfcommons", *args, "z", cwd=tmp_path)
    assert r.returncode == 2, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0], r.stderr
    db = tmp_path / ".perflab" / "perflab.db"
    assert not db.exists() or Store(db).campaign_names() == []
