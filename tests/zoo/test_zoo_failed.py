"""Issue 43 in the zoo: a measurement none of whose runs succeeded has no figure and says why
(``table["absent"]``, and a line under the scoreboard), and the verb exits 1 with the cause.
A zoo whose every run failed printed an empty scoreboard and exited 0."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from perflab.campaign.runners import local
from perflab.cli import main
from perflab.run.record import RunRecord
from perflab.spec import RunSpec

CAUSE = "RuntimeError: the engine did not start"


def _zoo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fails: object, *args: str) -> Result:
    """``perflab zoo ARGS --json`` where a run fails when ``fails(spec)``; the others are a
    plausible measurement (efficiency falls with the task size). Nothing starts."""
    n = [0]

    def measure(spec: RunSpec) -> RunRecord:
        n[0] += 1
        base = dict(run_id=f"r{n[0]}", started_at="", ended_at="", target=spec.target,
                    workload=spec.workload, params=spec.params, tasks=spec.tasks,
                    campaign=spec.campaign)  # fmt: skip
        if fails(spec):  # type: ignore[operator]
            return RunRecord(**base, status="failed", error=f"Traceback …\n{CAUSE}")
        us = float(spec.params.get("task_us") or 1000.0)
        eff = us / (us + 50.0) * (1 + 0.01 * math.sin(n[0]))
        tasks = spec.tasks or 1
        wall = tasks * us * 1e-6 / 2 / eff + 1e-3
        details = {"slots": 2, "latency_per_level_s": 1e-3}
        return RunRecord(**base, status="ok", wall_s=wall, tasks_per_s=tasks / wall,
                         measurement={"workload": details, "ideal_s": wall * eff,
                                      "efficiency": eff})  # fmt: skip

    monkeypatch.setattr(local, "measure", measure)
    argv = ["zoo", *args, "--runs", "2", "z", "--store", str(tmp_path / "s.db"),
            "--json"]  # fmt: skip
    return CliRunner().invoke(main, argv, env={"PERFLAB_HOME": str(tmp_path / "home")})


CHAIN = ["--targets", "cf-threads,parsl-threads", "--workloads", "chain", "--dag-tasks", "20"]
METG = ["--targets", "cf-threads", "--workloads", "metg", "--levels", "2000,200,20",
        "--fixed-levels", "--metg-tasks", "20", "--point-s", "0.001"]  # fmt: skip


def test_a_zoo_whose_every_run_failed_exits_1_with_the_cause(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    res = _zoo(tmp_path, monkeypatch, lambda s: True, *CHAIN)
    assert res.exit_code == 1, res.output
    last = res.stderr.strip().splitlines()[-1]
    assert "no figure at all" in last and CAUSE in last and "failed in 2 of 2 runs" in last
    out = json.loads(res.stdout)
    assert out["table"]["patterns"] == {} and len(out["table"]["absent"]) == 2
    assert all(r.get("chain.wall_s") is None for r in out["rows"])


def test_one_engine_failed_is_absent_and_the_other_measured(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    res = _zoo(tmp_path, monkeypatch, lambda s: s.target == "parsl-threads", *CHAIN)
    assert res.exit_code == 1, res.output
    assert "1 measurement(s) have no figure: parsl-threads chain" in res.stderr
    out = json.loads(res.stdout)
    assert "parsl-threads" not in out["table"]["patterns"]
    rows = {r["target"]: r for r in out["rows"]}
    assert (
        rows["cf-threads"]["chain.wall_s"] > 0 and rows["parsl-threads"].get("chain.wall_s") is None
    )


def test_a_failed_metg_level_is_named_and_not_in_the_curve(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    res = _zoo(tmp_path, monkeypatch, lambda s: s.params.get("task_us") == 200.0, *METG)
    assert res.exit_code == 1 and "cf-threads metg at 200 µs" in res.stderr, res.output
    m = json.loads(res.stdout)["table"]["metg"]["cf-threads"]
    assert [p["task_us"] for p in m["curve"]] == [2000.0, 20.0]


def test_the_largest_basis_without_its_largest_size_gives_no_metg(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    res = _zoo(tmp_path, monkeypatch, lambda s: s.params.get("task_us") == 2000.0, *METG,
               "--basis", "largest")  # fmt: skip
    assert res.exit_code == 1 and "at 2000 µs" in res.stderr, res.output
    assert json.loads(res.stdout)["table"]["metg"] == {}


def test_a_zoo_without_failures_exits_0(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    res = _zoo(tmp_path, monkeypatch, lambda s: False, *CHAIN)
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["table"]["absent"] == []


def test_a_metg_level_left_with_one_ok_run_has_no_interval_not_nan(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Found by tests/zoo/test_zoo_properties.py: the curve's missing interval was the
    frame's NaN, printed into the JSON as NaN and on the terminal as "(nan–nan)"."""
    seen: list[float] = []

    def fails(spec: RunSpec) -> bool:  # the second run at 20 µs fails
        us = spec.params.get("task_us")
        seen.append(us)
        return us == 20.0 and seen.count(us) == 2

    res = _zoo(tmp_path, monkeypatch, fails, *METG)
    assert res.exit_code == 0, res.output
    assert "NaN" not in res.stdout
    curve = json.loads(res.stdout)["table"]["metg"]["cf-threads"]["curve"]
    last = next(p for p in curve if p["task_us"] == 20.0)
    assert last["n"] == 1 and last["ci_low"] is None and last["ci_high"] is None
