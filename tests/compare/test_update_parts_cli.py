"""`compare --precision --update-parts` and the plan's range, through the CLI with a
synthetic machine in place of runs (no engine)."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest
from test_precision_cli import FakeMachine, cli

import perflab.cli.precision as pilots
import perflab.compare.planned as pc
from perflab.compare import refine
from perflab.run.record import RunRecord


@pytest.fixture
def fitted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Parts fitted from 4 A/A pairs at 500 and 8,000 tasks, stored in ``tmp_path``."""
    monkeypatch.setattr(pilots, "measure", FakeMachine(11))
    res = cli(tmp_path, "precision", "--windows", "500,8000", "--runs", "4")
    assert res.exit_code == 0, res.output
    assert "runs (predicted " in res.output  # its plans at ±2-10 % carry the range
    return tmp_path


def entry(home: Path) -> dict:
    (only,) = json.loads((home / "precision.json").read_text()).values()
    return dict(only)


def test_a_planned_comparison_pools_into_the_stored_parts(
    fitted: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = entry(fitted)
    assert [o["tasks"] for o in before["observations"]] == [500, 8000]
    machine = FakeMachine(12)
    monkeypatch.setattr(pc, "measure", machine)
    res = cli(fitted, "compare", "--precision", "10%", "--alpha", "0.05", "--update-parts",
              "--json")  # fmt: skip
    out = json.loads(res.output.strip().splitlines()[-1])
    assert res.exit_code == 0, res.output
    p = out["precision"]
    lo, hi = p["plan"]["pairs_range"]
    assert lo <= p["plan"]["pairs"] <= hi and "(predicted " in p["plan"]["line"]
    assert p["plan"]["wall_range_s"][0] <= p["plan"]["expected_wall_s"]
    up = p["parts_update"]
    assert up["line"].startswith("parts updated: ") and "stored in" in up["line"]
    pairs, tasks = out["a"]["n"], p["plan"]["tasks"]
    assert up["observation"] == pytest.approx(
        {**up["observation"], "tasks": tasks, "df": pairs - 1, "runs": 2 * pairs}
    )
    after = entry(fitted)
    assert after["runs"] == before["runs"] + 2 * pairs and after["key"] == before["key"]
    got = {o["tasks"]: o["df"] for o in after["observations"]}
    assert got[tasks] == pairs - 1 + (4 if tasks in (500, 8000) else 0)
    assert machine.calls == 2 * pairs


def test_without_the_flag_nothing_is_stored(fitted: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    before = (fitted / "precision.json").read_text()
    monkeypatch.setattr(pc, "measure", FakeMachine(13))
    res = cli(fitted, "compare", "--precision", "10%", "--alpha", "0.05")
    assert res.exit_code == 0, res.output
    assert (fitted / "precision.json").read_text() == before


def test_update_parts_needs_a_planned_comparison(fitted: Path) -> None:
    before = (fitted / "precision.json").read_text()
    res = cli(fitted, "compare", "--runs", "3", "--update-parts")
    assert res.exit_code == 2 and len(res.output.strip().splitlines()) == 1
    assert "--precision" in res.output
    assert (fitted / "precision.json").read_text() == before


def test_sub_batch_parts_are_refused_before_any_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import perflab.cli.compare as verb

    monkeypatch.setattr(verb, "measure", FakeMachine(14))
    res = cli(tmp_path, "precision", "--runs", "6", "--splits", "4", "--tasks", "2000")
    assert res.exit_code == 0, res.output
    before = (tmp_path / "precision.json").read_text()
    machine = FakeMachine(15)
    monkeypatch.setattr(pc, "measure", machine)
    res = cli(tmp_path, "compare", "--precision", "10%", "--update-parts")
    assert res.exit_code == 2 and len(res.output.strip().splitlines()) == 1
    assert "sub-batches" in res.output and machine.calls == 0
    assert (tmp_path / "precision.json").read_text() == before


def test_another_benchmark_never_pools_into_a_parts() -> None:
    a = {"target": "parsl-htex", "workload": "noop", "metric": "us_per_task", "python": "x"}
    assert refine.same_benchmark(a, {**a, "python": "y", "treatments": ["t"]}) == []
    assert refine.same_benchmark(a, {**a, "metric": "cpu_us_per_task"}) == ["metric"]
    assert refine.same_benchmark(a, {**a, "target": "dask"}) == ["target"]
    with pytest.raises(pc.PerflabError, match="B differs from A in target"):
        pc._may_pool(a, {**a, "target": "dask"})


class FailsThird(FakeMachine):
    """The synthetic machine whose third run fails."""

    def __call__(self, spec: Any) -> RunRecord:
        rec = super().__call__(spec)
        if self.calls == 3:
            return dataclasses.replace(rec, status="failed", error="boom", us_per_task=None)
        return rec


def test_a_comparison_with_a_failed_run_stores_nothing(
    fitted: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = (fitted / "precision.json").read_text()
    monkeypatch.setattr(pc, "measure", FailsThird(16))
    res = cli(fitted, "compare", "--precision", "10%", "--update-parts", "--json")
    assert res.exit_code == 1, res.output
    out = json.loads(res.output.strip().splitlines()[-1])
    assert out["precision"]["parts_update"]["line"] == "parts not updated: a run failed"
    assert (fitted / "precision.json").read_text() == before
