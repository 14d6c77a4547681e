"""``history --precision`` stops each step between neighbouring releases once it is known
(its interval within the target, or faster/slower at its look's spent level), as
``compare --precision`` does, and says what it used against its plan. A simulated machine:
nothing starts (the runs' records are made up from stored parts)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner, Result
from sidefakes import unbuilt

import perflab.cli  # noqa: F401  (registers the verbs)
import perflab.cli.history as history_cli
from perflab.analysis.stats import bonferroni_level
from perflab.cli.app import main
from perflab.compare import history
from perflab.compare import parts as mp
from perflab.compare import precision as pp
from perflab.compare.calibrate import signature
from perflab.compare.history_seq import run_rounds, step_plan, welch_half_width
from perflab.compare.stats import Decision
from perflab.prepare import Prepared
from perflab.run.record import RunRecord
from perflab.spec import RunSpec

#: The simulated machine's parts: 20 s a run outside the window, 0.5 ms a task, σ_b 3 %.
PARTS = pp.Parts(fixed_s=20.0, task_s=0.0005, var_between=0.03**2, var_within=1.5**2)


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """A perflab home holding the parts of the default benchmark (parsl-htex noop)."""
    m = mp.Measured(PARTS, 12, 8, 250.0, (19, 21), (4e-4, 6e-4), (5e-4, 2e-3), (1.5, 3.0))
    mp.save(m, signature(RunSpec(), "tasks_per_s"), tmp_path)
    return tmp_path


class Machine:
    """A release's runs: tasks/s of ``rates[version]`` with the parts' noise at the run's
    window (log-normal, σ² = σ_b² + σ_w²/n)."""

    def __init__(self, rates: dict[str, float], seed: int = 0) -> None:
        self.rates, self.rng, self.calls = rates, np.random.default_rng(seed), 0

    def __call__(self, ready: Prepared) -> RunRecord:
        self.calls += 1
        version = ready.spec.packages[-1].split("==")[1]
        n = ready.spec.tasks or 1000
        sd = math.sqrt(PARTS.var_run(n))
        rate = self.rates[version] * math.exp(sd * self.rng.standard_normal())
        return RunRecord("r", "", "", "parsl-htex", "noop", "ok", tasks=n, tasks_per_s=rate)


def run(home: Path, monkeypatch: pytest.MonkeyPatch, machine: Machine, *args: str) -> Result:
    monkeypatch.setattr(history, "measure", machine)
    monkeypatch.setattr(history_cli, "prepare", unbuilt)
    versions = ",".join(machine.rates)
    return CliRunner().invoke(
        main, ["history", "--package", "toy", "--range", versions, "--metric", "tasks_per_s",
               *args],
        env={"PERFLAB_HOME": str(home)},
    )  # fmt: skip


def test_a_clear_step_stops_early_and_is_the_change_point(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    machine = Machine({"1": 1000.0, "2": 1000.0, "3": 600.0}, seed=1)
    monkeypatch.setattr(pp, "MIN_RATE_WALL_S", 0.0)  # the stand-in's runs take no time
    res = run(home, monkeypatch, machine, "--precision", "3%", "--json")
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    p = out["precision"]
    assert p["half_width"] == max(s["half_width"] for s in p["steps"])
    hour = p["half_width"] * math.sqrt(p["wall_s"] / 3600)
    assert p["half_width_per_hour"] == pytest.approx(hour)
    # the plan: 13 runs per release (the parts at ±3 %), up to 1.5× that if underestimated
    assert p["plan"]["pairs"] == 13 and p["planned_runs"] == 39 and p["most_runs"] == 60
    assert p["runs"] == machine.calls == sum(r["runs"] for r in out["releases"])
    two_three = p["steps"][1]
    assert two_three["stopped"] == "decided" and two_three["decision"]["verdict"] == "slower"
    # decided at the first look (4 runs each, at its spent share of the step's alpha)
    assert two_three["runs"] == 4
    assert two_three["decision"]["alpha"] == pytest.approx(p["levels"]["4"])
    assert sum(p["levels"].values()) == pytest.approx(bonferroni_level(0.05, 2))
    (cp,) = out["change_points"]
    assert (cp["before"], cp["after"], cp["confirmed"]) == ("2", "3", True)
    assert cp["decision"] == two_three["decision"]  # confirmed by its looks, not re-tested
    # release 3 ran only while its one step was open
    assert out["releases"][2]["runs"] == 4 < out["releases"][1]["runs"]


def test_the_text_states_runs_used_each_steps_stop_and_the_error_spent(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    machine = Machine({"1": 1000.0, "2": 1000.0, "3": 600.0}, seed=2)
    out = home / "out"
    (home / "f.png").write_bytes(b"png")  # the figure is not what is tested (plotnine is slow)
    monkeypatch.setattr(history_cli, "history_figure", lambda hist, out: [home / "f.png"])
    res = run(home, monkeypatch, machine, "--precision", "5%", "-o", str(out))
    assert res.exit_code == 0, res.output
    md = (out / "history.md").read_text()
    assert f"* {machine.calls} runs of 21 planned (36 at most)" in md
    assert "* 2 → 3: decided after 4 runs each" in md
    text = " ".join(res.output.split())  # the console wraps the plan's line
    assert "each step stops once known" in text
    assert f"{machine.calls} runs of 21 planned (36 at most)" in text
    assert "2 → 3: decided after 4 runs each" in text
    assert "widest step ±" in text and "at this rate an hour gives" in text
    assert "change point between 2 and 3: confirmed by its looks (at level 0.001)" in text
    assert "levels adding up to α = 0.025" in text and "share of α = 0.05 over 2 steps" in text


def test_out_of_time_looks_at_once_at_an_unspent_level_and_stops(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    pl = pp.plan(PARTS, 0.03, 0.05)
    plan = step_plan(pl, 2, 0.05, 3600)
    rng = np.random.default_rng(0)
    samples: list[list[float]] = [[], []]
    steps = run_rounds(samples, lambda i: samples[i].append(float(rng.lognormal(0, 0.03))),
                       plan, "us_per_task", 0.05, out_of_time=lambda: True)  # fmt: skip
    (s,) = steps
    assert s.stopped in ("time budget", "decided", "precision reached")
    assert s.runs == 2 == len(samples[0]) == len(samples[1])
    assert s.looks[0]["level"] == plan.looks.levels[min(plan.looks.levels)]


def test_a_a_histories_say_different_at_most_alpha_and_stop_before_the_plans_end() -> None:
    """Replayed A/A histories of three releases: a false step at most alpha (0.05 over both
    steps; binomial 99.9 % bound over 80), and fewer runs than the plan on average."""
    pl = pp.plan(PARTS, 0.05, 0.05)
    plan = step_plan(pl, 3, 0.05, 3600)
    sd = math.sqrt(PARTS.var_run(pl.tasks))
    false, runs, n = 0, 0, 80
    for seed in range(n):
        rng = np.random.default_rng(seed)
        samples: list[list[float]] = [[], [], []]

        def one(i: int, samples: list[list[float]] = samples, rng: object = rng) -> None:
            samples[i].append(float(rng.lognormal(0, sd)))  # type: ignore[attr-defined]

        steps = run_rounds(samples, one, plan, "us_per_task", 0.05, seed)
        false += any(s.decision is not None and s.decision.different for s in steps)
        runs += sum(map(len, samples))
    assert false <= 0.05 * n + 3.1 * math.sqrt(0.05 * 0.95 * n)
    assert runs / n < 3 * pl.pairs


def test_welch_half_width_is_zero_on_exact_data_and_inf_below_two_values() -> None:
    assert welch_half_width([1.0, 1.0], [2.0, 2.0], 0.05) == 0.0
    assert welch_half_width([1.0], [2.0, 2.1], 0.05) == math.inf
    assert 0 < welch_half_width([1.0, 1.1, 0.9], [2.0, 2.1, 1.9], 0.05) < 1


def test_a_precise_interval_that_still_shows_a_change_measures_on_until_decided() -> None:
    """±4 % reached on a ×1.06 step whose verdict is undecided at the look's level: compare
    stops on the precision; a history's or explain's step measures on (it asks whether the
    step is there), unless the looks are over; an interval around no change stops."""
    levels = {4: 0.001, 8: 0.02, 12: 0.001}
    compare = pp.Looks(levels, 0.05, 0.05, 4)
    step = pp.Looks(levels, 0.05, 0.05, 4, until_decided=True)
    shows = Decision(8, 8, 1.06, 0.98, 1.15, 0.98, 0.03, 0.02, 0.05, "inconclusive")
    assert compare.stop(shows, 0.04, 8) == "precision reached"
    assert step.stop(shows, 0.04, 8) is None
    assert step.stop(shows, 0.04, 12) == "most runs"
    assert step.stop(shows, 0.04, 9, late=True) == "time budget"
    around = Decision(8, 8, 1.02, 0.95, 1.09, 0.98, 0.5, 0.02, 0.05, "inconclusive")
    assert step.stop(around, 0.04, 8) == "precision reached"


def test_a_release_whose_runs_all_fail_ends_its_steps_untested(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Its two steps have no test: each ends "too few values" at the last look (no number
    invented, valid JSON), and the history exits 1 naming it."""
    machine = Machine({"1": 1000.0, "2": 1000.0, "3": 600.0}, seed=3)
    real = machine.__call__

    def failing(ready: Prepared) -> RunRecord:
        rec = real(ready)
        if ready.spec.packages[-1].endswith("==2"):
            return RunRecord("r", "", "", "parsl-htex", "noop", "failed", error="boom")
        return rec

    monkeypatch.setattr(machine, "__call__", failing)
    monkeypatch.setattr(history, "measure", failing)
    monkeypatch.setattr(history_cli, "prepare", unbuilt)
    res = CliRunner().invoke(
        main, ["history", "--package", "toy", "--range", "1,2,3", "--precision", "5%",
               "--metric", "tasks_per_s", "--json"], env={"PERFLAB_HOME": str(home)},
    )  # fmt: skip
    assert res.exit_code == 1, res.output
    out = json.loads(res.stdout)
    p = out["precision"]
    assert [s["stopped"] for s in p["steps"]] == ["too few values", "too few values"]
    assert all(s["decision"] is None and s["half_width"] is None for s in p["steps"])
    assert p["runs"] == 3 * 12 == p["most_runs"]  # every release ran to the last look
    # 1 and 3 are neighbours in the search, each run to the end: the gate judges that step
    (cp,) = out["change_points"]
    assert (cp["before"], cp["after"]) == ("1", "3")
    assert cp["decision"]["alpha"] == pytest.approx(0.05)  # the search's one pair, as today
