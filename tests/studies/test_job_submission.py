"""The job-submission study: its table's medians and utilisation, its curves' run specs."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import perflab
from perflab.errors import PerflabError
from perflab.run.record import RunRecord
from perflab.studies import job_submission, job_submission_charts


def _record(rate: float, wall: float, user: float, sys_: float, status: str = "ok") -> RunRecord:
    return RunRecord(
        run_id="x", started_at="", ended_at="", target="saga", workload="noop", status=status,
        tasks_per_s=rate, wall_s=wall, cpu_user_s=user, cpu_sys_s=sys_, error="boom\ncause",
    )  # fmt: skip


def test_table_takes_medians_and_the_seeds_utilisation() -> None:
    rows = job_submission.table_rows(100, 10, patched=False)
    assert [r.id for r in rows] == ["1", "2", "4", "5", "6", "9"]
    assert rows[4].spec.engine_options == {"endpoint": "ssh"}
    rows[2].records = [_record(4, 10, 1, 1), _record(6, 20, 3, 1), _record(5, 8, 1, 1)]
    rows[3].records = [_record(0, 0, 0, 0, status="failed")]
    out = {r["id"]: r for r in job_submission.table(rows)}
    assert out["4"]["jobs_per_s"] == 5 and out["4"]["real_s"] == 10
    assert out["4"]["util_pct"] == 20  # median of 20 %, 20 %, 25 %
    assert out["4"]["seed"]["jobs_per_s"] == 57.8
    assert out["5"]["jobs_per_s"] is None and out["5"]["failed"] == 1
    assert out["5"]["error"] == "cause"
    trace = "exit code 1\nTraceback (most recent call last):\n  File x\nmod.JobFailed: lost (\n)\n"
    assert job_submission.cause(trace) == "mod.JobFailed: lost ("


def test_curve_specs() -> None:
    pts = job_submission.curve_specs("endpoints", [1, 3], 20, 60, per_endpoint=2)
    assert [k for k, _ in pts] == [{"endpoints": 1, "services": 2}, {"endpoints": 3, "services": 6}]
    assert pts[1][1].engine_options == {"endpoint": "ssh", "endpoints": "3", "services": "6"}
    pts = job_submission.curve_specs("clients", [2], 500, 60, shards=4)
    assert pts[0][1].target == "redis-pubsub" and pts[0][1].engine_options["shards"] == "4"
    with pytest.raises(PerflabError):
        job_submission.curve_specs("hosts", [1], 1, 1)


def test_cli_bad_input_exits_2_under_the_new_and_the_old_spelling() -> None:
    for verb in (["study", "job-submission"], ["seed001"]):
        proc = perflab(*verb, "curve", "services", "--levels", "1,x")
        assert proc.returncode == 2 and "--levels" in proc.stderr
        assert "Traceback" not in proc.stderr


def test_curve_charts_are_named_for_what_they_show(tmp_path: Path) -> None:
    rows = [
        {"target": "saga", "services": n, "rate": 2.0 * n, "rates": [2.0 * n, 2.1 * n],
         "failed": [], "run_ids": []}
        for n in (1, 2)
    ]  # fmt: skip
    paths = job_submission_charts.curve_figure("services", rows, "services", tmp_path)
    assert sorted(Path(p).name for p in paths) == [
        "job_submission_services.png",
        "job_submission_services.svg",
    ]
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(Path(p).name for p in paths)
