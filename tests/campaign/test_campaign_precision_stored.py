"""Precision per hour on exact data says so (no "±0.0 % reached"), and the report measures
against the target the campaign stored at ``campaign create --precision``. Cheap: an ``echo``
campaign, in process; the report's writer is stood in for (its figures take long)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner, Result

import perflab.cli  # noqa: F401  (registers the verbs)
from perflab.analysis.reach import EXACT_WHY, reach
from perflab.cli.app import main


def cli(home: Path, *args: str) -> Result:
    return CliRunner().invoke(main, list(args), env={"PERFLAB_HOME": str(home)})


@pytest.fixture
def store(tmp_path: Path) -> str:
    """A 2² full factorial of ``echo 1000`` (every run the same score), run twice per set."""
    db = str(tmp_path / "s.db")
    made = cli(tmp_path, "campaign", "create", "p", "--command", "echo 1000", "--factors",
               "a,b", "--design", "full", "--runs", "2", "--store", db,
               "--metric", "us_per_task")  # fmt: skip
    assert made.exit_code == 0, made.output
    ran = cli(tmp_path, "campaign", "run", "p", "--store", db)
    assert ran.exit_code == 0, ran.output
    return db


def test_status_on_exact_data_says_exact_data_not_a_precision(tmp_path: Path, store: str) -> None:
    res = cli(tmp_path, "campaign", "status", "p", "--store", store, "--json")
    p = json.loads(res.output)["precision"]
    assert p["exact"] and p["runs"] == 8 and p["why_not"] == EXACT_WHY
    assert p["effects"] == [] and p["lines"] == [f"precision per hour ({EXACT_WHY})"]
    text = cli(tmp_path, "campaign", "status", "p", "--store", store).output
    assert "exact data" in text and "±0.0%" not in text and "reached" not in text


def test_noise_beyond_rounding_is_not_exact() -> None:
    x = np.array([[0.0], [0.0], [1.0], [1.0]])
    exact = reach(np.array([2.0, 2.0, 3.0, 3.0]), x, ["a"], 1.0)
    assert exact["exact"] and exact["effects"] == []
    noisy = reach(np.array([2.0, 2.0 * (1 + 1e-6), 3.0, 3.0]), x, ["a"], 1.0)
    assert "exact" not in noisy and noisy["effects"][0]["half_width"] > 0


def test_the_report_measures_against_the_campaigns_stored_target(
    tmp_path: Path, store: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    import perflab.api
    import perflab.report.html as html

    got: dict[str, Any] = {}

    def write_report(*args: Any) -> Path:
        got["target"] = args[7]
        return tmp_path / "report.html"

    monkeypatch.setattr(html, "write_report", write_report)
    perflab.api.report("p", store, tmp_path / "r")
    assert got["target"] is None  # created without --precision: the report's default
    with sqlite3.connect(store) as db:  # as `campaign create --precision 2%` stores it
        db.execute("UPDATE campaigns SET definition = json_set(definition, '$.precision', 0.02)")
    perflab.api.report("p", store, tmp_path / "r")
    assert got["target"] == 0.02
