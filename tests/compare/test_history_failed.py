"""Issue 43 in ``perflab history``: a release whose runs all failed has no value — absent
from the table and the change-point search, with its cause — and a history whose question
cannot be answered exits 1 with the cause. Every run failed used to print "no change point
proposed" and exit 0: a claim made of nothing."""

from __future__ import annotations

import json
import math
from dataclasses import replace
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from sidefakes import unbuilt

from perflab.cli import history as history_cli
from perflab.cli import main
from perflab.compare import history
from perflab.prepare import Prepared
from perflab.run.record import RunRecord

CAUSE = "score: tasks_per_s nan is not a finite number"
VERSIONS = ["1.0", "1.1", "1.2", "1.3"]


def _run(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    fails: set[str],
    *extra: str,
    some: dict[str, int] | None = None,
) -> Result:
    """``perflab history`` of four releases (the first the base), where every run of the
    releases in ``fails`` fails, and the first ``some[v]`` runs of release v; the others
    measure 1000 tasks/s, 1.3 half that."""
    n = [0]
    seen: dict[str, int] = {}

    def measure(ready: Prepared) -> RunRecord:
        version = ready.spec.packages[-1].split("==")[1]
        n[0] += 1
        seen[version] = seen.get(version, 0) + 1
        rec = RunRecord("r", "", "", "command", None, "ok")
        if version in fails or seen[version] <= (some or {}).get(version, 0):
            return replace(rec, status="failed", error=f"Traceback ...\n{CAUSE}\n")
        rate = (500.0 if version == "1.3" else 1000.0) * (1 + 0.01 * math.sin(n[0]))
        return replace(rec, tasks_per_s=rate)

    monkeypatch.setattr(history, "measure", measure)
    monkeypatch.setattr(history_cli, "prepare", unbuilt)
    args = ["history", "--package", "toy", "--versions", ",".join(VERSIONS), "--command",
            "echo 1", "--runs", "3", "--by", "tasks_per_s", *extra]  # fmt: skip
    return CliRunner().invoke(main, args, env={"PERFLAB_HOME": str(tmp_path / "home")})


def _numbers(obj: object) -> list[float]:
    if isinstance(obj, dict):
        return [x for v in obj.values() for x in _numbers(v)]
    if isinstance(obj, list):
        return [x for v in obj for x in _numbers(v)]
    return [float(obj)] if isinstance(obj, float) else []


def test_every_release_failed_exits_1_with_the_cause_and_no_number(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # -o: the files are written (no figure: nothing to draw), then exit 1
    res = _run(tmp_path, monkeypatch, set(VERSIONS), "-o", str(tmp_path / "out"))
    assert res.exit_code == 1, res.output
    last = res.stderr.strip().splitlines()[-1]
    assert "no change point can be sought (0 of 4 releases measured in 2 runs" in last
    assert CAUSE in last
    assert "no change point proposed" not in res.stdout
    assert "no change point sought" in res.stdout
    saved = json.loads((tmp_path / "out" / "history.json").read_text())
    assert saved["change_points"] == [] and len(saved["absent"]) == 4
    assert all(not r["values"] and "geo_mean" not in r for r in saved["releases"])


def test_the_base_release_failed_is_absent_and_said(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    res = _run(tmp_path, monkeypatch, {"1.0"}, "--json")
    assert res.exit_code == 1, res.output
    assert "1 of 4 releases have no value" in res.stderr and "1.0 failed in 3 of 3" in res.stderr
    saved = json.loads(res.stdout)
    first = saved["releases"][0]
    assert first["values"] == [] and "geo_mean" not in first and CAUSE in first["cause"]
    # the search runs on what was measured: 1.1, 1.2 then the step to 1.3
    assert all("1.0" not in (c["before"], c["after"]) for c in saved["change_points"])
    assert all(math.isfinite(x) for x in _numbers(saved))


def test_one_failed_release_is_a_gap_not_a_value(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    res = _run(tmp_path, monkeypatch, {"1.2"}, "--json")
    assert res.exit_code == 1 and "1.2 failed in 3 of 3 runs" in res.stderr, res.output
    saved = json.loads(res.stdout)
    row = next(r for r in saved["releases"] if r["version"] == "1.2")
    assert row["n"] == 0 and row["failed"] == 3 and "geo_mean" not in row
    # the step is placed between the measured neighbours of the gap
    assert any(c["before"] == "1.1" and c["after"] == "1.3" for c in saved["change_points"])


def test_no_failure_exits_0(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    res = _run(tmp_path, monkeypatch, set(), "--json")
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["absent"] == []


def test_some_runs_failed_every_release_usable_exits_0_saying_how_many(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # as tune's final blocks: a figure from the ok runs stands when the gate still has its 2
    # per release; the failures are said per release (text and JSON), and the exit is 0
    res = _run(tmp_path, monkeypatch, set(), some={"1.2": 1})
    assert res.exit_code == 0, res.output
    assert "1.2: 1 of 3 runs failed; its level is from the 2 measured; cause: " in " ".join(
        res.stdout.split()
    )
    res = _run(tmp_path, monkeypatch, set(), "--json", some={"1.2": 1})
    saved = json.loads(res.stdout)
    row = next(r for r in saved["releases"] if r["version"] == "1.2")
    assert (row["n"], row["failed"], row["runs"]) == (2, 1, 3) and CAUSE in row["cause"]
    assert saved["absent"] == [] and saved["too_few"] == []
    assert any(c["before"] == "1.2" and c["after"] == "1.3" for c in saved["change_points"])


def test_a_release_left_one_value_is_unusable_and_exits_1(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # one value has no interval and the gate cannot test a step beside it: it used to be
    # searched, its candidate dropped unsaid, "no change point proposed" and exit 0
    out = tmp_path / "out"  # the figure draws its one value as a point with no error bar
    res = _run(tmp_path, monkeypatch, set(), "--json", "-o", str(out), some={"1.2": 2})
    assert res.exit_code == 1, res.output
    assert (out / "history_toy.png").stat().st_size > 1000
    # its line midway between 1.1 and 1.3 (x 2 and 4), on 1.2: index + 0.5 drew it at 2.5,
    # between 1.1 and 1.2
    cp = next(c for c in json.loads(res.stdout)["change_points"] if c["after"] == "1.3")
    assert cp["index"] + 0.5 == 2.5 and history.step_x(VERSIONS, cp["before"], cp["after"]) == 3
    last = res.stderr.strip().splitlines()[-1]
    assert "1 of 4 releases have no usable value" in last
    assert "1.2 measured in 1 of 3 runs (the gate needs 2)" in last and CAUSE in last
    saved = json.loads(res.stdout)
    row = next(r for r in saved["releases"] if r["version"] == "1.2")
    assert row["n"] == 1 and "geo_mean" in row and "ci_low" not in row  # no invented width
    assert len(saved["too_few"]) == 1 and saved["absent"] == []
    # the step is placed between the usable neighbours of the gap, never beside 1.2
    assert any(c["before"] == "1.1" and c["after"] == "1.3" for c in saved["change_points"])
    assert all("1.2" not in (c["before"], c["after"]) for c in saved["change_points"])
