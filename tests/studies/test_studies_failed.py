"""Issue 43 in the studies: a failed run never contributes a number. A point none of whose
runs succeeded has no value and says why, and ``study postprocess report`` exits 1 with the
cause (a study whose every run failed printed nothing and exited 0); a job-submission curve's
real time is over its ok runs (a failed run's wall time, its timeout, was in the median)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from perflab.cli import main
from perflab.run.record import RunRecord
from perflab.spec import RunSpec
from perflab.studies import job_submission, postprocess_charts
from perflab.studies.postprocess import CHARTS, design

CAUSE = "RuntimeError: engine died"


def _rows(failed: object) -> list[dict]:
    """A made-up study of cf-processes: the runs where ``failed(point)`` failed."""
    rows = []
    for i, p in enumerate(design(["cf-processes"], 0.1, 2)):
        row = {**p.__dict__, "key": p.key()}
        if failed(p):  # type: ignore[operator]
            rows.append({**row, "status": "failed", "error": f"Traceback\n{CAUSE}",
                         "makespan_s": 600.0})  # fmt: skip
            continue
        one = p.tasks * (p.task_s / p.concurrency + p.pp_s)
        y = one * (0.8 if p.policy == "drain-many" else 1.0) * (1 + 0.01 * (i % 3 - 1))
        model = {"retrieve-one": one, "drain-many": one * 0.8}
        rows.append({**row, "status": "ok", "makespan_s": y, "model_by_policy": model,
                     "model_makespan_s": model[p.policy],
                     "model_error": model[p.policy] / y - 1})  # fmt: skip
    return rows


def _report(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, failed: object) -> Result:
    monkeypatch.setattr(postprocess_charts, "charts", lambda summary, out: [])  # no figures
    rows = _rows(failed)
    (tmp_path / "points.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return CliRunner().invoke(main, ["study", "postprocess", "report", "-o", str(tmp_path)])


def _summary(tmp_path: Path) -> dict:
    return json.loads((tmp_path / "summary.json").read_text())


def _at_base(p: object) -> bool:
    return all(getattr(p, k) == v for k, v in {"tasks": 100, "concurrency": 5, "task_s": 0.1,
                                               "pp_s": 0.1}.items())  # fmt: skip


def test_a_study_whose_every_run_failed_exits_1_with_the_cause(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    res = _report(tmp_path, monkeypatch, lambda p: True)
    assert res.exit_code == 1, res.output
    assert "no run of the study succeeded" in res.stderr and CAUSE in res.stderr
    s = _summary(tmp_path)
    assert s["base_gain"] == [] and s["points"] == [] and s["model_error"] == {}
    assert s["gains"] == {"cf-processes": {}}
    assert len(s["absent"]) == len({(r["policy"], *(r[k] for k in CHARTS)) for r in _rows(
        lambda p: True)})  # fmt: skip


def test_a_failed_base_point_has_no_gain_and_says_why(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    res = _report(tmp_path, monkeypatch, lambda p: _at_base(p) and p.policy == "drain-many")
    assert res.exit_code == 1 and "1 point(s) have no value" in res.stderr, res.output
    assert "drain-many (tasks 100, concurrency 5, task_s 0.1, pp_s 0.1): no value" in res.stdout
    s = _summary(tmp_path)
    assert s["base_gain"] == []  # a gain needs both policies at the base: none is invented
    assert not any(r["policy"] == "drain-many" and r["level"] == 5 and r["chart"] ==
                   "concurrency" for r in s["points"])  # fmt: skip


def test_one_failed_point_is_left_out_of_its_chart(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    res = _report(tmp_path, monkeypatch, lambda p: p.tasks == 200 and p.policy == "retrieve-one")
    assert res.exit_code == 1 and "tasks=200" in res.stderr, res.output
    s = _summary(tmp_path)
    assert s["base_gain"] and 200 not in [g["level"] for g in s["gains"]["cf-processes"]["tasks"]]
    assert all(p["makespan_s"] != 600.0 for p in s["points"] if "makespan_s" in p)
    assert all(p["mean_s"] < 600.0 for p in s["points"])


def test_a_curve_s_times_are_of_its_ok_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    # rounds over both points: 1 ok, 2 failed, 1 timed out (its wall time: the timeout), 2 failed
    runs = iter([("ok", 100.0, 2.0), ("failed", None, 1.0), ("timeout", None, 300.0),
                 ("failed", None, 1.0)])  # fmt: skip

    def measure(spec: RunSpec) -> RunRecord:
        status, rate, wall = next(runs)
        return RunRecord("r", "", "", spec.target, "noop", status, tasks_per_s=rate,
                         wall_s=wall, error=None if status == "ok" else CAUSE)  # fmt: skip

    monkeypatch.setattr(job_submission, "measure", measure)
    monkeypatch.setattr(job_submission, "validate", lambda spec: None)
    points = job_submission.curve_specs("services", [1, 2], 10, 60)
    first, second = job_submission.run_curve(points, repeat=2)
    assert first["rate"] == 100.0 and first["real_s"] == 2.0  # not the median of 2 and 300
    assert second["rate"] is None and second["real_s"] is None and second["rates"] == []
    assert len(second["failed"]) == 2
