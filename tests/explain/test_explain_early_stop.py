"""``explain --precision``'s step stage stops once the step is known (compare --precision's
looks and stopping rule), round by round, says why and what it used, and an undecided step
is said to be undecided, not "nothing to explain". A stand-in store and runner: nothing
starts."""

from __future__ import annotations

import math
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner

import perflab.cli  # noqa: F401  (registers the verbs)
from perflab.cli.app import main
from perflab.compare import parts as mp
from perflab.compare import precision as pp
from perflab.compare.calibrate import signature
from perflab.compare.history_seq import step_plan
from perflab.errors import PerflabError
from perflab.explain import sequential
from perflab.explain.plan import rounds
from perflab.explain.render import lines
from perflab.spec import RunSpec

#: A machine of 20 s a run outside the window, 0.5 ms a task, σ_b 3 %.
PARTS = pp.Parts(fixed_s=20.0, task_s=0.0005, var_between=0.03**2, var_within=1.5**2)
NAME = "x.0-step"


class Store:
    """The step campaign's planned rounds and the records run so far, by seq."""

    def __init__(self, sets: list[list[str]]) -> None:
        self.sets, self.recs = sets, {}

    def pending(self, name: str) -> list[tuple[int, list[str]]]:
        return [(i, s) for i, s in enumerate(self.sets) if i not in self.recs]

    def planned(self, name: str) -> list[tuple[int, list[str]]]:
        return list(enumerate(self.sets))

    def records_by_seq(self, name: str) -> list[tuple[int, Any]]:
        return sorted(self.recs.items())


def machine(ratio: float, sd: float, seed: int = 0) -> Any:
    """``run_campaign``: each pending run's µs per task, B ``ratio`` times A, log-normal."""
    rng = np.random.default_rng(seed)

    def run_campaign(store: Store, name: str, max_runs: int | None = None) -> None:
        for seq, s in store.pending(name)[:max_runs]:
            us = 100.0 * (1.0 if "release_a" in s else ratio) * math.exp(sd * rng.normal())
            store.recs[seq] = SimpleNamespace(status="ok", us_per_task=us, error=None)

    return run_campaign


def step(
    monkeypatch: pytest.MonkeyPatch, ratio: float, sd: float, target: float = 0.03,
    late: bool = False, store: Store | None = None,
) -> tuple[Store, dict[str, Any], Any]:  # fmt: skip
    pl = pp.plan(PARTS, target, 0.05)
    looks = step_plan(pl, 2, 0.05, 3600).looks
    plan = rounds({"A": ["release_a"], "B": []}, looks.last, 0)
    store = store or Store([s for _, _, s in plan])
    monkeypatch.setattr(sequential, "run_campaign", machine(ratio, sd))
    setup = SimpleNamespace(step_looks=looks, metrics=["us_per_task"], threshold=0.05,
                            alpha=0.05)  # fmt: skip
    _, st = sequential.run_step(store, NAME, plan, setup, None, lambda: late)  # type: ignore[arg-type]
    return store, st, looks


def test_a_clear_step_is_decided_at_the_first_look(monkeypatch: pytest.MonkeyPatch) -> None:
    store, st, looks = step(monkeypatch, 1.4, 0.03)
    p = st["precision"]
    assert st["verdict"] == "slower" and st["different"] and p["stopped"] == "decided"
    assert p["rounds"] == min(looks.levels) == 4 and len(store.recs) == 8
    assert len(store.sets) == 2 * looks.last and p["planned_rounds"] == 13
    assert st["alpha"] == pytest.approx(looks.levels[4])  # the first look's spent level
    assert "decided after 4 of 13 planned rounds" in p["line"]
    assert "levels adding up to α = 0.05" in p["line"]
    rate = pp.per_hour(p["half_width"], p["wall_s"])  # n/a when the stand-in took no time
    assert p["half_width_per_hour"] == rate and pp.per_hour_text(rate) in p["line"]


def test_the_step_says_its_precision_per_hour(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pp, "MIN_RATE_WALL_S", 0.0)  # the stand-in's runs take no time
    _, st, _ = step(monkeypatch, 1.0, 0.03)
    p = st["precision"]
    hour = p["half_width"] * math.sqrt(p["wall_s"] / 3600)
    assert p["half_width_per_hour"] == pytest.approx(hour)
    assert f"an hour gives ±{pp.pct(hour)}, 4× the time halves it" in p["line"]


def test_no_change_stops_once_the_interval_is_within_the_target(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    store, st, looks = step(monkeypatch, 1.0, 0.01)
    p = st["precision"]
    assert p["stopped"] == "precision reached" and st["verdict"] == "no difference"
    assert p["half_width"] <= 0.03 and p["rounds"] >= looks.precision_from
    assert len(store.recs) == 2 * p["rounds"] < len(store.sets)


def test_out_of_time_looks_at_round_two_at_an_unspent_level(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    store, st, looks = step(monkeypatch, 1.03, 0.05, late=True)
    p = st["precision"]
    assert p["rounds"] == 2 and len(store.recs) == 4
    assert p["looks"][0]["level"] == looks.levels[min(looks.levels)]
    assert p["stopped"] in ("time budget", "decided", "precision reached")


def test_run_again_it_replays_the_looks_and_runs_nothing_more(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    store, first, _ = step(monkeypatch, 1.0, 0.01)
    done = dict(store.recs)
    _, again, _ = step(monkeypatch, 1.0, 0.01, store=store)
    assert store.recs == done

    timed = ("wall_s", "half_width_per_hour", "line")  # the clock's, not the looks'

    def timeless(st: dict[str, Any]) -> dict[str, Any]:
        p = st["precision"]
        return {**st, "precision": {k: v for k, v in p.items() if k not in timed},
                "said": p["line"].split(" in ")[0]}  # fmt: skip

    assert timeless(again) == timeless(first)


class Handed(PerflabError):
    """Raised by the stand-in for ``api.explain`` once it has kept what the CLI handed it."""


def test_the_cli_hands_the_steps_looks_and_budget_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import perflab.api

    m = mp.Measured(PARTS, 12, 8, 250.0, (19, 21), (4e-4, 6e-4), (5e-4, 2e-3), (1.5, 3.0))
    mp.save(m, signature(RunSpec(), "us_per_task"), tmp_path)
    got: dict[str, Any] = {}

    def explain(*args: object, **kw: Any) -> None:
        got.update(kw)
        raise Handed

    monkeypatch.setattr(perflab.api, "explain", explain)
    args = ["explain", "--range", "1..2", "--precision", "3%", "--max-time", "1800"]
    res = CliRunner().invoke(main, args, env={"PERFLAB_HOME": str(tmp_path)})
    assert res.exit_code == 2 and "it stops once known" in res.output
    pl = pp.plan(PARTS, 0.03, 0.05)
    assert got["runs"] == pl.pairs and got["step_looks"] == step_plan(pl, 2, 0.05, 1800).looks
    assert got["step_budget"] == (1800, pytest.approx(2 * PARTS.run_s(pl.tasks)))


STOPPED = "step: time budget after 4 of 13 planned rounds"


def test_an_undecided_step_is_said_to_be_undecided() -> None:
    result = {"package": "p", "a": "1", "b": "2", "command": None, "target": "parsl-htex",
              "workload": "noop", "threshold": 0.05, "verdict": "step undecided (time budget)",
              "metrics": ["us_per_task"], "runs": 8, "campaigns": ["x.0-step"], "elapsed_s": 60,
              "step": {"ratio": 1.04, "confidence": 0.99, "ci_low": 0.97, "ci_high": 1.11,
                       "p_value": 0.2, "n_a": 4, "verdict": "inconclusive",
                       "metric": "us_per_task",
                       "precision": {"line": STOPPED}}}  # fmt: skip
    text = "\n".join(lines(result))
    assert "step undecided (time budget): neither a change beyond ±5%" in text
    assert "step: time budget after 4 of 13" in text and "nothing to explain" not in text


@pytest.mark.parametrize(
    "step, verdict",
    [
        ({"different": True, "verdict": "slower"}, None),
        ({"different": False, "verdict": "no difference"}, "nothing to explain"),
        # without --precision an inconclusive step stays today's "nothing to explain"
        ({"different": False, "verdict": "inconclusive"}, "nothing to explain"),
        ({"different": False, "verdict": "inconclusive", "precision": {"stopped": "time budget"}},
         "step undecided (time budget)"),
        ({"different": False, "verdict": "inconclusive", "precision": {"stopped": "most runs"}},
         "step undecided (most runs)"),
        # stopped on its precision: an interval within the target around no change
        ({"different": False, "verdict": "inconclusive",
          "precision": {"stopped": "precision reached"}}, "nothing to explain"),
        ({"different": False, "verdict": "too few runs", "failed": "boom"}, "step failed: boom"),
    ],
)  # fmt: skip
def test_the_step_says_which_it_is(step: dict[str, Any], verdict: str | None) -> None:
    from perflab.explain.driver import step_verdict

    assert step_verdict(step) == verdict
