"""The study's own logic (design, summaries, gain, charts) on rows made up for the test."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from conftest import perflab
from perflab.errors import PerflabError
from perflab.studies.postprocess import (
    LEVELS,
    design,
    gain_at_base,
    model_errors,
    point_errors,
    report,
    summarize,
)


def test_design_sweeps_one_parameter_at_a_time_around_the_base() -> None:
    pts = design(["cf-processes"], 0.1, 2)
    base = {"tasks": 100, "concurrency": 5, "task_s": 0.1, "pp_s": 0.1}
    at_base = [p for p in pts if all(getattr(p, k) == v for k, v in base.items())]
    assert len(at_base) == 2 * 2  # shared by the four charts: once per policy and rep
    levels = sum(len(v) for v in LEVELS.values()) - len(LEVELS) + 1
    assert len(pts) == levels * 2 * 2
    for p in pts:
        assert sum(getattr(p, k) != v for k, v in base.items()) <= 1
    with pytest.raises(PerflabError, match="scale"):
        design(["cf-processes"], 0.0, 1)


def _rows(gain: float) -> list[dict]:
    rnd = random.Random(1)
    rows = []
    for p in design(["cf-processes"], 0.1, 4):
        one = p.tasks * (p.task_s / p.concurrency + p.pp_s)
        y = one * (1 - gain if p.policy == "drain-many" else 1) * rnd.uniform(0.98, 1.02)
        model = {"retrieve-one": one, "drain-many": one * (1 - gain)}
        rows.append(
            {
                **p.__dict__,
                "key": p.key(),
                "status": "ok",
                "makespan_s": y,
                "model_by_policy": model,
                "model_makespan_s": model[p.policy],
                "model_error": model[p.policy] / y - 1,
            }
        )
    return rows


def test_gain_at_the_base_point_has_an_interval_around_the_truth() -> None:
    g = gain_at_base(_rows(0.2), "cf-processes")
    assert g is not None
    assert g["gain"] == pytest.approx(0.2, abs=0.02)
    lo, hi = g["gain_ci"]
    assert 0.15 < lo < g["gain"] < hi < 0.25  # excludes no gain, brackets the estimate
    errs = model_errors(_rows(0.2))["cf-processes"]
    assert errs["within_10pct"] == 1.0 and abs(errs["median"]) < 0.02


def test_summary_has_every_level_of_every_chart_and_charts_are_written(tmp_path: Path) -> None:
    rows = _rows(0.1)
    s = summarize(rows)
    for chart, mults in LEVELS.items():
        got = {r["level"] for r in s if r["chart"] == chart and r["policy"] == "drain-many"}
        assert len(got) == len(mults), chart
    assert all(r["ci_low"] <= r["mean_s"] <= r["ci_high"] for r in s)
    (tmp_path / "points.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = report(tmp_path)
    assert {Path(p).suffix for p in out["charts"]} == {".png", ".svg"}
    assert all(Path(p).stat().st_size > 1000 for p in out["charts"])
    assert json.loads((tmp_path / "summary.json").read_text())["runs"] == len(rows)


def test_report_of_a_directory_without_a_study_is_bad_input(tmp_path: Path) -> None:
    proc = perflab("postprocess", "report", str(tmp_path))
    assert proc.returncode == 2
    assert "points.jsonl" in proc.stderr and "Traceback" not in proc.stderr


def test_a_stored_run_is_predicted_again_from_its_own_measurements() -> None:
    from perflab.workloads.postprocess import remodel
    from perflab.workloads.postprocess_model import Costs

    row = {
        "status": "ok",
        "tasks": 4,
        "concurrency": 2,
        "policy": "retrieve-one",
        "makespan_s": 2.3,
        "model_error": 0.5,  # what an older model said
        "model_costs": Costs().to_dict(),
        "mean_task_s": 0.75,
        "mean_pp_s": 0.1,
        "task_samples": [0.5, 1.0, 0.5, 1.0],
        "clock_s": 0.0,
        "model_kind": "workqueue",
    }
    again = remodel(row)
    assert again["model_error"] == pytest.approx(0.0, abs=1e-9)
    assert set(again["model_by_policy"]) == {"retrieve-one", "drain-many", "wq-retrieve-many"}
    old = {k: v for k, v in row.items() if k != "task_samples"}
    assert remodel(old) == old  # nothing to predict from: left as measured then


def test_model_errors_are_split_by_policy() -> None:
    errs = model_errors(_rows(0.1))["cf-processes"]
    assert set(errs["by_policy"]) == {"retrieve-one", "drain-many"}
    assert sum(e["runs"] for e in errs["by_policy"].values()) == errs["runs"]


def test_point_errors_compare_mean_prediction_with_mean_makespan() -> None:
    rows = _rows(0.1)
    # one point's runs: 20 % too fast and 20 % too slow, so its mean is the model's
    same = [r for r in rows if all(r[k] == rows[0][k] for k in ("policy", *LEVELS))]
    assert len(same) >= 2 and len(same) % 2 == 0
    for r, f in zip(same, [1.2, 0.8] * len(same), strict=False):
        r["makespan_s"] = r["model_makespan_s"] * f
        r["model_error"] = 1 / f - 1
    errs = model_errors(rows)["cf-processes"]
    assert errs["within_10pct"] < 1.0  # those runs miss by 17-25 %
    assert errs["by_point"]["within_10pct"] == 1.0
    assert abs(errs["by_point"]["worst"]) < 0.03
    assert errs["by_point"]["runs"] == len(point_errors(rows))
