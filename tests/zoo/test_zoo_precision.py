"""``zoo --precision`` (issue 40): after the pilot rounds each measurement is repeated until
its 95 % interval is within the target, planned from the pilot's spread and printed; a plan
past --max-time is one line naming its time, exit 2, nothing more run. Synthetic: a stand-in
round writes records drawn from a known spread (no engine starts)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

import perflab.cli  # noqa: F401  (registers the verbs)
from perflab.campaign.store import Store
from perflab.cli.app import main
from perflab.compare import precision as pp
from perflab.errors import PerflabError
from perflab.run.record import RunRecord
from perflab.zoo import precise as zp
from perflab.zoo.driver import run_zoo
from perflab.zoo.suite import ZooConfig

#: Log-sd of each pattern's wall time: chain is noisy, fan quiet.
SD = {"chain": 0.08, "fan": 0.01}


def stand_in(seed: int, later: dict[str, float] | None = None):
    """Rounds drawn at ``SD``; with ``later``, every round after the pilot at its spreads."""
    rng = np.random.default_rng(seed)
    calls = [0]

    def run(store: Store, name: str) -> dict[str, int]:
        plan = store.campaign(name).design_info["plan"]
        by_seq = dict(zip([s for s, _ in store.planned(name)], plan, strict=True))
        recs = []
        sd = {**SD, **(later or {})} if calls[0] else SD
        calls[0] += 1
        for seq, _ in store.pending(name):
            kind = by_seq[seq]["kind"]
            wall = 2.0 * math.exp(rng.normal(0, sd[kind]))
            rec = RunRecord(
                run_id=f"r{seq:04d}", campaign=name, target="cf-threads", workload=kind,
                started_at="2026-01-01T00:00:00+00:00", ended_at="2026-01-01T00:00:03+00:00",
                status="ok", wall_s=wall, tasks=1000, params=dict(by_seq[seq]["spec"]["params"]),
            )  # fmt: skip
            recs.append((rec, seq))
        store.add_runs(recs)
        return store.counts(name)

    return run


def zoo(tmp_path: Path, target: float, max_time_s: float = 3600.0, seed: int = 0,
        later: dict[str, float] | None = None) -> tuple:  # fmt: skip
    with pytest.MonkeyPatch.context() as mp:  # no parts stored where the zoo looks first
        mp.setenv("PERFLAB_HOME", str(tmp_path / "home"))
        return _zoo(tmp_path, target, max_time_s, seed, later)


def _zoo(tmp_path: Path, target: float, max_time_s: float, seed: int,
         later: dict[str, float] | None) -> tuple:  # fmt: skip
    store = Store(tmp_path / "s.db")
    cfg = ZooConfig(targets=["cf-threads"], kinds=["chain", "fan"], replicates=3)
    said: list[str] = []
    res = run_zoo(store, cfg, "z", seed=1, run_round=stand_in(seed, later), precision=target,
                  max_time_s=max_time_s, say=said.append)  # fmt: skip
    return res, said, store


def test_each_measurement_runs_until_its_interval_is_within_the_target(tmp_path: Path) -> None:
    res, said, store = zoo(tmp_path, 0.05)
    p = res["precision"]
    assert said and said[-1].startswith("plan for ±5.0% on every measurement: ")
    by = {r["row"].split()[1]: r for r in p["rows"]}
    # the quiet row is known from its pilot; the noisy one needed more runs
    assert by["fan"]["runs"] == 3 and by["fan"]["stopped"] == "precision reached"
    assert by["chain"]["runs"] > 3
    assert by["chain"]["stopped"] in ("precision reached", "most runs")
    if by["chain"]["stopped"] == "precision reached":
        assert by["chain"]["half_width"] <= 0.05
    assert store.counts("z")["done"] == by["chain"]["runs"] + by["fan"]["runs"]
    assert "no alpha spent on looking" in p["line"]
    assert p["half_width"] == max(r["half_width"] for r in p["rows"] if r["runs"])
    rate = pp.per_hour(p["half_width"], p["runs_s"])  # every run's seconds, the pilot's too
    assert p["half_width_per_hour"] == rate and pp.per_hour_text(rate) in p["line"]


def test_the_zoo_says_its_precision_per_hour(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(pp, "MIN_RATE_WALL_S", 0.0)
    p = zoo(tmp_path, 0.05)[0]["precision"]
    assert p["runs_s"] == pytest.approx(sum(r["wall_s"] for r in p["rows"]))
    hour = p["half_width"] * math.sqrt(p["runs_s"] / 3600)
    assert p["half_width_per_hour"] == pytest.approx(hour)
    assert f"an hour gives ±{pp.pct(hour)}, 4× the time halves it" in p["line"]


def test_each_row_says_its_own_precision_per_hour(tmp_path: Path) -> None:
    # a stand-in run lasts 3 s (its record's start to end): a row's hours are its own runs'
    p = zoo(tmp_path, 0.05)[0]["precision"]
    by = {r["row"].split()[1]: r for r in p["rows"]}
    for r in by.values():
        assert r["wall_s"] == pytest.approx(3.0 * r["runs"])
        hour = r["half_width"] * math.sqrt(3.0 * r["runs"] / 3600)
        assert r["half_width_per_hour"] == pytest.approx(hour, rel=1e-9)
    # the noisy row ran on: its own hours, not the quiet row's, price its interval
    assert by["chain"]["wall_s"] > by["fan"]["wall_s"]


def test_a_row_without_time_or_without_an_interval_has_no_rate() -> None:
    def row(values: list[float], cost_s: list[float], need: int = 3) -> zp.Row:
        item = {"kind": "chain", "spec": {"target": "cf-threads", "params": {}}}
        return zp.Row(item, values, cost_s, need)

    found = {
        "timed": row([2.0, 2.1, 1.9], [3.0, 3.0, 3.0, 4.0]),  # a failed run's 4 s count too
        "instant": row([2.0, 2.1, 1.9], [0.0, 0.0, 0.0]),
        "unrecorded": row([2.0, 2.1, 1.9], []),
        "one run": row([2.0], [3.0], need=0),  # no spread: no interval to rate
    }
    out = zp.reached(found, {"target": 0.05, "need": {"timed": 3}}, 0, 0.0)
    rate = {k: r["half_width_per_hour"] for k, r in zip(found, out["rows"], strict=True)}
    hw = found["timed"].width()
    assert rate["timed"] == pytest.approx(hw * math.sqrt(13.0 / 3600), rel=1e-9)
    assert rate["instant"] is None and rate["unrecorded"] is None and rate["one run"] is None
    assert [r["wall_s"] for r in out["rows"]] == pytest.approx([13.0, 0.0, 0.0, 3.0])


def test_the_noisy_row_mostly_reaches_the_target_over_seeds(tmp_path: Path) -> None:
    reached = 0
    for seed in range(10):
        res, _, _ = zoo(tmp_path / str(seed), 0.05, seed=seed)
        chain = next(r for r in res["precision"]["rows"] if " chain " in r["row"])
        reached += chain["stopped"] == "precision reached"
    assert reached == 10  # its runs are renewed from its spread: only --max-time stops it short


def test_a_row_noisier_than_its_pilot_runs_on_past_its_plan(tmp_path: Path) -> None:
    # the pilot sees chain at 8 % sd, the rounds after it at 25 %: the pilot plans ~12 runs
    # and ~100 are needed; the runs are renewed from the spread, not capped at 1.5x the plan
    p = zoo(tmp_path, 0.05, later={"chain": 0.25})[0]["precision"]
    chain = next(r for r in p["rows"] if " chain " in r["row"])
    assert chain["stopped"] == "precision reached" and chain["half_width"] <= 0.05
    assert chain["needed_runs"] > chain["planned_runs"] > 0
    assert chain["runs"] > 1.5 * chain["planned_runs"]
    assert "; 1 needed more runs than their pilot planned)" in p["line"]


def test_a_plan_past_max_time_is_refused_after_the_pilot_nothing_more(tmp_path: Path) -> None:
    with pytest.raises(PerflabError, match=r"would take ~.* more than --max-time 5 s"):
        zoo(tmp_path, 0.005, max_time_s=5)
    store = Store(tmp_path / "s.db")
    assert store.counts("z")["planned"] == 6  # the pilot only: 2 measurements × 3 runs


def test_the_cli_refuses_a_pilot_too_small_and_max_time_alone(tmp_path: Path) -> None:
    env = {"PERFLAB_HOME": str(tmp_path)}
    st = ["--store", str(tmp_path / "s.db")]
    res = CliRunner().invoke(main, ["zoo", "--precision", "3%", "--runs", "1", *st], env=env)
    assert res.exit_code == 2 and "--runs 2 or more" in res.output
    res = CliRunner().invoke(main, ["zoo", "--max-time", "60", *st], env=env)
    assert res.exit_code == 2 and "give --precision" in res.output
    res = CliRunner().invoke(main, ["zoo", "--precision", "lots", *st], env=env)
    assert res.exit_code == 2 and "--precision" in res.output
    assert not (tmp_path / "s.db").exists() or not Store(tmp_path / "s.db").campaign_names()
