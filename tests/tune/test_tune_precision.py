"""``tune --precision`` (issue 40): the final blocks sized from the stored variance parts and
stopped once known (compare's looks), the error spent stated; the search and the reduction
keep their budget; a plan past --max-time is one line naming its time, exit 2, nothing run.
Synthetic: a measure function with a known truth, or stored parts with nothing run."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner, Result

import perflab.cli  # noqa: F401  (registers the verbs)
from perflab.campaign.designs.base import Constraints
from perflab.cli.app import main
from perflab.compare import parts as mp
from perflab.compare import precision as pp
from perflab.compare.calibrate import signature
from perflab.errors import PerflabError
from perflab.spec import RunSpec
from perflab.tune import precise
from perflab.tune.optuna_search import OptunaSearch

#: 20 s a run outside the window, 0.5 ms a task; σ_b 3 %, so a set's log has σ ≈ 3 %.
PARTS = pp.Parts(fixed_s=20.0, task_s=0.0005, var_between=0.03**2, var_within=0.0)


def final_plan(target: float, max_time_s: float = 1e6, tasks: int = 1000) -> precise.FinalPlan:
    return precise.FinalPlan(target, tasks, PARTS, max_time_s)


def measure_of(truth: dict[frozenset[str], float], sd: float, seed: int):
    rng = np.random.default_rng(seed)

    def measure(sets: list[list[str]], stage: str, reason: str) -> list[float]:
        return [truth.get(frozenset(s), 1.0) * 100 * math.exp(rng.normal(0, sd)) for s in sets]

    return measure


def tuned(target: float, truth: dict[frozenset[str], float], sd: float, seed: int = 0) -> dict:
    cands = ["a", "b"]
    s = OptunaSearch(cands, Constraints(cands, None), 40, seed=seed)
    s.precision = final_plan(target)
    return s.run(measure_of(truth, sd, seed)).to_dict()


def test_a_clear_speed_up_stops_within_a_few_blocks_long_before_the_plan() -> None:
    """a halves the time: decided within a few blocks though ±0.5 % plans hundreds (the early
    looks' levels are small: a fifth of alpha shared by every look but the planned one)."""
    truth = {frozenset(["a"]): 0.5, frozenset(["a", "b"]): 0.5}
    res = tuned(0.005, truth, 0.03)
    p = res["precision"]
    assert p["planned_blocks"] > 50 and p["blocks"] <= 10
    assert [s["stopped"] for s in p["sets"]] == ["decided"] * len(p["sets"])
    finals = [st for st in res["stages"] if st["name"] == "final"]
    assert sum(st["runs"] for st in finals) == p["blocks"] * p["plan"]["units"]
    assert len(finals) == len(p["sets"][0]["looks"]) >= 2  # one stage per look
    assert res["measured"]["pairs"] == p["blocks"] and res["measured"]["ratio"] > 1.5
    assert "Bonferroni over" in p["line"] and "α = 0.05" in p["line"]
    assert p["half_width"] == max(s["half_width"] for s in p["sets"])
    rate = pp.per_hour(p["half_width"], p["wall_s"])  # n/a when the stand-in took no time
    assert p["half_width_per_hour"] == rate and pp.per_hour_text(rate) in p["line"]


def test_the_final_blocks_say_their_precision_per_hour(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pp, "MIN_RATE_WALL_S", 0.0)  # the stand-in's blocks take no time
    p = tuned(0.005, {frozenset(["a"]): 0.5, frozenset(["a", "b"]): 0.5}, 0.03)["precision"]
    hour = p["half_width"] * math.sqrt(p["wall_s"] / 3600)
    assert p["half_width_per_hour"] == pytest.approx(hour)
    assert f"an hour gives ±{pp.pct(hour)}, 4× the time halves it" in p["line"]


def test_no_change_stops_once_its_interval_meets_the_target() -> None:
    """Neither candidate does anything: the recommended set (whatever it is) is measured
    until its interval is within ±5 %, in looks; the half-width reached meets the target."""
    res = tuned(0.05, {}, 0.03, seed=1)
    p = res["precision"]
    rec = p["sets"][0]
    assert rec["stopped"] == "precision reached"
    assert rec["half_width"] <= 0.05
    assert p["blocks"] <= p["most_blocks"] and p["blocks"] == rec["looks"][-1]["blocks"]
    # the levels of the looks add up to the set's share of alpha
    assert sum(p["levels"].values()) == pytest.approx(0.05 / len(p["sets"]))


def test_without_a_target_the_final_blocks_are_pairs_as_before() -> None:
    cands = ["a", "b"]
    res = OptunaSearch(cands, Constraints(cands, None), 40, seed=0).run(measure_of({}, 0.03, 0))
    assert "precision" not in res.to_dict()


def test_the_blocks_plan_reaches_the_target_at_its_level() -> None:
    fp = final_plan(0.03)
    pl, rule = precise.blocks_plan(fp, 4, 2)
    level = 1 - pl.confidence
    assert level == pytest.approx(pp.planned_level(0.025))
    assert pl.half_width <= 0.03 and pl.units == 4 and pl.pairs in rule.levels
    assert pl.wall_s == pytest.approx(4 * pl.pairs * PARTS.run_s(1000))
    # one pair fewer would not reach it
    fewer = pp.half_width(2 * PARTS.var_run(1000), pl.pairs - 1, level)
    assert math.expm1(fewer) > 0.03
    assert "4 × " in pl.line()


def test_null_sets_say_different_at_most_alpha_over_many_seeds() -> None:
    """Over 100 A/A final stages (the set is the base), the looks' 'faster'/'slower' rate
    stays within alpha: the split over looks and sets holds."""
    false = 0
    for seed in range(100):
        rng = np.random.default_rng(seed)
        block = [frozenset(), frozenset(["x"])]
        compared = [precise.Compared("recommended set", 1)]

        def run(sets: list[set[str]], why: str, rng: np.random.Generator = rng) -> list[float]:
            return [100 * math.exp(rng.normal(0, 0.03)) for _ in sets]

        precise.run_blocks(run, block, compared, final_plan(0.02, tasks=1000), rng)
        false += compared[0].stopped == "decided"
    # α = 0.05: 5 expected at most; 13 is the 99.9 % binomial quantile of 100 draws at 5 %
    assert false <= 13


@pytest.fixture
def home(tmp_path: Path) -> Path:
    m = mp.Measured(PARTS, 12, 8, 250.0, (19, 21), (4e-4, 6e-4), (5e-4, 2e-3), (1.5, 3.0))
    mp.save(m, signature(RunSpec(), "us_per_task"), tmp_path)
    return tmp_path


def cli(home: Path, *args: str) -> Result:
    return CliRunner().invoke(main, list(args), env={"PERFLAB_HOME": str(home)})


def test_an_unreachable_target_names_its_time_and_runs_nothing(home: Path) -> None:
    store = home / "s.db"
    res = cli(home, "tune", "t", "--factors", "cfg_2_blocks", "--precision", "0.2%",
              "--max-time", "600", "--store", str(store))  # fmt: skip
    lines = res.output.strip().splitlines()
    assert res.exit_code == 2 and len(lines) == 1, res.output
    assert "would take ~" in lines[0] and "--max-time 10 min" in lines[0]
    assert not store.exists() and not (home / "tune-t.json").exists()


def test_options_the_plan_replaces_are_refused(home: Path) -> None:
    res = cli(home, "tune", "t", "--factors", "cfg_2_blocks", "--precision", "3%",
              "--pairs", "5")  # fmt: skip
    assert res.exit_code == 2 and "drop --pairs" in res.output
    res = cli(home, "tune", "t", "--factors", "cfg_2_blocks", "--max-time", "60")
    assert res.exit_code == 2 and "--max-time bounds the final blocks of --precision" in res.output


class Handed(PerflabError):
    """Raised by a stand-in for the tune, once it has kept what the CLI handed it."""


def test_the_plan_is_printed_and_handed_on(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import perflab.api

    got: dict[str, object] = {}

    def tune(name: str, spec: RunSpec, *a: object, **kw: object) -> None:
        got.update(spec=spec, precision=kw["precision"])
        raise Handed

    monkeypatch.setattr(perflab.api, "tune", tune)
    res = cli(home, "tune", "t", "--factors", "cfg_2_blocks", "--precision", "3%")
    assert res.exit_code == 2 and "plan of the final blocks at their largest: " in res.output
    fp = got["precision"]
    assert isinstance(fp, precise.FinalPlan) and fp.target == 0.03 and fp.say is not None
    spec = got["spec"]
    assert isinstance(spec, RunSpec) and spec.tasks == fp.tasks and spec.time_s is None
