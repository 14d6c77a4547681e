"""`perflab precision` and `compare --precision` with a synthetic machine in place of runs."""

from __future__ import annotations

import dataclasses
import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner, Result
from sidefakes import CountingPrepare

import perflab.cli  # noqa: F401  (registers the verbs)
import perflab.cli.compare as verb  # precision's runs: fresh_runs, as calibrate's
import perflab.cli.precision as pilots  # its pilot pairs
import perflab.compare.planned as pc
from perflab.cli.app import main
from perflab.compare import gate
from perflab.compare import precision as pp
from perflab.prepare import Prepared, prepare
from perflab.run.record import RunRecord
from perflab.spec import RunSpec

FIXED_S, TASK_S, SD_B, SD_W = 20.0, 0.0005, 0.03, 1.5


class FakeMachine:
    """Records of fresh runs: the window's log metric is N(0, σ_b²) + N(0, σ_w²/n)."""

    def __init__(self, seed: int = 0, slower: float = 1.0) -> None:
        self.rng = np.random.default_rng(seed)
        self.calls = 0
        self.slower = slower

    def __call__(self, spec: RunSpec | Prepared) -> RunRecord:
        self.calls += 1
        spec = spec.spec if isinstance(spec, Prepared) else spec
        n = spec.tasks or 1000
        m = max(1, spec.window_splits)
        beta = SD_B * self.rng.standard_normal()
        per_task = 100e-6 * math.exp(beta) * (self.slower if "B" in spec.env else 1.0)
        subs = [
            per_task * math.exp(self.rng.standard_normal() * SD_W * math.sqrt(m / n)) * n / m
            for _ in range(m)
        ]
        wall = sum(subs)
        measurement: dict[str, Any] = {
            "phases": {"total": FIXED_S + TASK_S * n, "window": TASK_S * n}
        }
        if m > 1:
            measurement["window_splits"] = [{"tasks": n // m, "wall_s": w} for w in subs]
        return RunRecord(
            "r", "", "", spec.target, spec.workload, "ok", tasks=n, wall_s=wall,
            us_per_task=wall * 1e6 / n, measurement=measurement,
        )  # fmt: skip


def cli(home: Path, *args: str) -> Result:
    return CliRunner().invoke(main, list(args), env={"PERFLAB_HOME": str(home)})


@pytest.fixture
def measured(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setattr(verb, "measure", FakeMachine(1))
    res = cli(tmp_path, "precision", "--runs", "12", "--splits", "8", "--tasks", "2000")
    assert res.exit_code == 0, res.output
    assert "best window n*" in res.output and "±3%:" in res.output
    return tmp_path


def test_precision_stores_the_parts(measured: Path) -> None:
    data = json.loads((measured / "precision.json").read_text())
    (entry,) = data.values()
    parts = entry["parts"]
    assert parts["fixed_s"] == pytest.approx(FIXED_S, rel=0.05)
    assert parts["task_s"] == pytest.approx(TASK_S, rel=0.05)
    lo, hi = entry["within_ci"]
    assert lo <= SD_W**2 <= hi


def test_an_unreachable_target_is_refused_before_any_run(
    measured: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    machine = FakeMachine(2)
    monkeypatch.setattr(pc, "measure", machine)
    res = cli(measured, "compare", "--precision", "0.1%", "--max-time", "600")
    assert res.exit_code == 2
    lines = res.output.strip().splitlines()
    assert len(lines) == 1 and "would take ~" in lines[0] and "--max-time 10 min" in lines[0]
    assert machine.calls == 0


def test_compare_with_a_target_plans_and_reaches_it(
    measured: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    machine = FakeMachine(3)
    monkeypatch.setattr(pc, "measure", machine)
    counting = CountingPrepare(prepare)
    monkeypatch.setattr(gate, "prepare", counting)
    res = cli(measured, "compare", "--precision", "5%", "--alpha", "0.05", "--json")
    assert res.exit_code == 0, res.output
    assert len(counting.calls) == 2  # each side once, however many runs the plan took
    out: dict[str, Any] = json.loads(res.output.strip().splitlines()[-1])
    p = out["precision"]
    assert p["plan"]["line"].endswith("(96.0%)") and p["target"] == 0.05
    assert p["stopped"] in ("precision reached", "most runs", "decided")
    assert machine.calls == out["a"]["n"] + out["b"]["n"]
    rate = pp.per_hour(p["half_width"], p["wall_s"])  # n/a when the stand-in took no time
    assert p["half_width_per_hour"] == rate and pp.per_hour_text(rate) in p["line"]


def test_precision_per_hour_is_the_half_width_times_the_root_of_the_hours() -> None:
    assert pp.per_hour(0.04, 900) == pytest.approx(0.02)  # a quarter hour: 4× halves it
    assert pp.per_hour(0.04, 0.001) is None and pp.per_hour(math.inf, 900) is None
    assert pp.per_hour(None, 900) is None
    assert pp.per_hour_text(0.02) == "at this rate an hour gives ±2.0%, 4× the time halves it"
    assert "n/a" in pp.per_hour_text(None) and "±0.0%" not in pp.per_hour_text(None)


def test_precision_conflicts_with_runs_and_needs_parts(tmp_path: Path) -> None:
    res = cli(tmp_path, "compare", "--precision", "3%", "--runs", "4")
    assert res.exit_code == 2 and "drop --runs" in res.output
    res = cli(tmp_path, "compare", "--precision", "3%")
    assert res.exit_code == 2 and "perflab precision" in res.output
    assert pc.parse_target("3%") == pytest.approx(0.03) and pc.parse_target("0.03") == 0.03


def test_the_text_output_says_the_plan_and_what_was_reached(
    measured: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(pc, "measure", FakeMachine(4))
    res = cli(measured, "compare", "--precision", "5%", "--alpha", "0.05")
    assert res.exit_code == 0, res.output
    assert "plan: " in res.output and "look at " in res.output
    assert "reached (planned ±" in res.output


def test_pilots_at_two_windows_store_the_fitted_parts_and_the_pick(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    machine = FakeMachine(5)
    monkeypatch.setattr(pilots, "measure", machine)
    res = cli(tmp_path, "precision", "--windows", "500,8000", "--runs", "8")
    assert res.exit_code == 0, res.output
    assert machine.calls == 2 * 2 * 8
    assert "fitted from A/A pairs at 500, 8,000 tasks" in res.output
    (entry,) = json.loads((tmp_path / "precision.json").read_text()).values()
    assert entry["windows"] == [500, 8000] and 125 <= entry["window"] <= 32000
    assert entry["parts"]["fixed_s"] == pytest.approx(FIXED_S)
    assert entry["parts"]["task_s"] == pytest.approx(TASK_S)
    lo, hi = entry["within_ci"]
    assert lo <= SD_W**2 <= hi
    monkeypatch.setattr(pc, "measure", FakeMachine(6))
    res = cli(tmp_path, "compare", "--precision", "5%", "--alpha", "0.05", "--json")
    assert res.exit_code == 0, res.output
    tasks = json.loads(res.output.strip().splitlines()[-1])["precision"]["plan"]["tasks"]
    assert 125 <= tasks <= 32000  # the plan stays near the pilots' windows


@pytest.mark.parametrize("windows", ["500", "a,b", "0,500", "500,500"])
def test_bad_pilot_windows_are_refused_before_any_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, windows: str
) -> None:
    machine = FakeMachine(7)
    monkeypatch.setattr(pilots, "measure", machine)
    res = cli(tmp_path, "precision", "--windows", windows)
    assert res.exit_code == 2 and "--windows" in res.output
    assert machine.calls == 0 and not (tmp_path / "precision.json").exists()


#: CPU per task is far quieter than wall per task here (on HTEX its CV was a third of it).
CPU_US, CPU_SD_B, CPU_SD_W = 40.0, 0.01, 0.15


class CpuMachine(FakeMachine):
    """``FakeMachine``'s records with the runs' CPU seconds, drawn with their own noise."""

    def __call__(self, spec: RunSpec | Prepared) -> RunRecord:
        rec = super().__call__(spec)
        n = rec.tasks or 1
        z_b, z_w = self.rng.standard_normal(2)
        cpu = CPU_US * 1e-6 * n * math.exp(CPU_SD_B * z_b + CPU_SD_W * z_w / math.sqrt(n))
        return dataclasses.replace(rec, cpu_user_s=0.75 * cpu, cpu_sys_s=0.25 * cpu)


def test_pilots_by_cpu_per_task_store_their_own_parts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(pilots, "measure", CpuMachine(8))
    pilot = ["precision", "--windows", "500,8000", "--runs", "8"]
    res = cli(tmp_path, *pilot, "--metric", "cpu_us_per_task")
    assert res.exit_code == 0, res.output
    (cpu,) = json.loads((tmp_path / "precision.json").read_text()).values()
    assert cpu["signature"]["metric"] == "cpu_us_per_task"
    assert cpu["parts"]["fixed_s"] == pytest.approx(FIXED_S)  # the cost is the run's, any metric
    # no parts for µs per task yet: compare by it has nothing to plan from; by CPU it plans
    # (a plan past --max-time is refused before any run, naming its time)
    res = cli(tmp_path, "compare", "--precision", "5%")
    assert res.exit_code == 2 and "perflab precision" in res.output
    res = cli(tmp_path, "compare", "--precision", "5%", "--max-time", "10",
              "--metric", "cpu_us_per_task")  # fmt: skip
    assert res.exit_code == 2 and "would take ~" in res.output
    res = cli(tmp_path, *pilot)
    assert res.exit_code == 0, res.output
    entries = json.loads((tmp_path / "precision.json").read_text())
    assert entries[cpu["key"]] == cpu  # the wall pilots stored beside it, not over it
    (us,) = (e for k, e in entries.items() if k != cpu["key"])
    assert us["signature"]["metric"] == "us_per_task"
    assert {k: v for k, v in us["signature"].items() if k != "metric"} == {
        k: v for k, v in cpu["signature"].items() if k != "metric"
    }
    # each fitted from its own metric: CPU's run variance at 500 tasks is far below wall's
    var = {m: {o["tasks"]: o["var"] for o in e["observations"]} for m, e in (("cpu", cpu),
                                                                          ("us", us))}  # fmt: skip
    assert var["cpu"][500] < var["us"][500] / 5  # truths: 1.5e-4 and 5.4e-3


def test_an_unknown_metric_for_the_pilots_is_refused_before_any_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    machine = CpuMachine(9)
    monkeypatch.setattr(pilots, "measure", machine)
    res = cli(tmp_path, "precision", "--windows", "500,8000", "--metric", "cpu_per_nothing")
    assert res.exit_code == 2
    (line,) = res.output.strip().splitlines()
    assert "cpu_per_nothing" in line and "--metric" in line and "Traceback" not in res.output
    assert machine.calls == 0 and not (tmp_path / "precision.json").exists()


def test_cpu_per_task_from_sub_batches_is_refused_before_any_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    machine = CpuMachine(10)
    monkeypatch.setattr(verb, "measure", machine)  # --splits' runs (fresh_runs)
    res = cli(tmp_path, "precision", "--runs", "4", "--metric", "cpu_us_per_task")
    assert res.exit_code == 2
    (line,) = res.output.strip().splitlines()
    assert "cannot be split" in line and "--windows fits any metric" in line
    assert machine.calls == 0 and not (tmp_path / "precision.json").exists()
