"""``zoo``/``metg --precision`` refuses a target out of reach before its pilot runs (issue 40's
bad input: one line naming the time, exit 2, nothing run or stored): from parts or a
calibration stored for a row's signature, else from a bound that needs no run (a row's ideal
time and the engine's least stored start-up); when nothing is known it says that the pilot
runs first and how long its runs are capped at. No engine starts: the refusals come first,
and the runs that do happen are a stand-in's."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from click.testing import CliRunner
from test_zoo_precision import stand_in

import perflab.cli  # noqa: F401  (registers the verbs)
from perflab.campaign.store import Store
from perflab.cli.app import main
from perflab.compare import calibrate as cal
from perflab.compare import parts as mp
from perflab.compare.precision import Parts
from perflab.spec import RunSpec
from perflab.zoo.driver import run_zoo
from perflab.zoo.suite import ZooConfig, plan_items

CFG = ZooConfig(targets=["cf-threads"], kinds=["chain", "fan"], replicates=3)


def specs(cfg: ZooConfig = CFG) -> list[RunSpec]:
    return [RunSpec.from_dict(it["spec"]) for it in plan_items(cfg)]


def store_parts(home: Path, spec: RunSpec, sd: float, fixed_s: float = 1.0) -> None:
    home.mkdir(exist_ok=True)
    parts = Parts(fixed_s, 1e-4, sd**2, 0.0)
    m = mp.Measured(parts, 8, 1, 0.0, (fixed_s, fixed_s), (1e-4, 1e-4), (0, 1), (0, 0))
    mp.save(m, cal.signature(spec, "wall_s"), home)


def store_calibration(home: Path, spec: RunSpec, sd: float) -> None:
    home.mkdir(exist_ok=True)
    c = cal.calibrate_values(cal.signature(spec, "us_per_task"), [1.0, 1.5] * 4, sims=10)
    c.sigma_log = sd
    cal.save(c, home)


def cli(tmp_path: Path, *args: str) -> tuple[int, str, Path]:
    db = tmp_path / "s.db"
    env = {"PERFLAB_HOME": str(tmp_path / "home")}
    res = CliRunner().invoke(main, [*args, "--store", str(db)], env=env)
    return res.exit_code, res.output, db


def nothing_stored(db: Path) -> bool:
    return not db.exists() or not Store(db).campaign_names()


@pytest.mark.parametrize("source", ["parts", "calibration"])
def test_a_target_out_of_reach_of_stored_variance_is_refused_before_the_pilot(
    tmp_path: Path, source: str
) -> None:
    home = tmp_path / "home"
    for spec in specs():  # 40 % run-to-run noise, 0.1 % asked: thousands of runs a row
        (store_parts if source == "parts" else store_calibration)(home, spec, 0.4)
    code, out, db = cli(tmp_path, "zoo", "--targets", "cf-threads", "--workloads", "chain,fan",
                        "--precision", "0.1%", "--max-time", "600")  # fmt: skip
    assert code == 2, out
    assert len(out.strip().splitlines()) == 1 and "Traceback" not in out
    m = re.search(r"±0\.1% on every measurement would take ~([\d.]+) (h|days) more", out)
    assert m, out
    assert "more than --max-time 10 min" in out
    assert ("stored parts" if source == "parts" else "a stored calibration") in out
    assert nothing_stored(db)


def test_without_stored_variance_a_short_pilot_bounds_the_time_by_its_ideal(
    tmp_path: Path,
) -> None:
    # two pilot runs leave each row one run short of a first look; a METG point of 100 s of
    # ideal work cannot run in less, so ±5 % within a minute is out of reach whatever the noise
    code, out, db = cli(tmp_path, "zoo", "--metg", "--targets", "cf-threads",
                        "--levels", "10000,1000", "--fixed-levels", "--point-s", "100",
                        "--runs", "2", "--precision", "5%", "--max-time", "60")  # fmt: skip
    assert code == 2, out
    assert len(out.strip().splitlines()) == 1
    assert "would take ~" in out and "a lower bound" in out and "ideal time" in out
    assert nothing_stored(db)


def test_the_engines_stored_start_up_of_another_workload_bounds_a_run(tmp_path: Path) -> None:
    noop = RunSpec(target="cf-threads", workload="noop", tasks=1000)
    store_parts(tmp_path / "home", noop, 0.05, fixed_s=30.0)  # S ≥ 30 s on this engine
    code, out, db = cli(tmp_path, "zoo", "--targets", "cf-threads", "--workloads", "chain,fan",
                        "--runs", "2", "--precision", "5%", "--max-time", "30")  # fmt: skip
    assert code == 2, out
    m = re.search(r"would take ~(\d+) s more", out)
    assert m and 60 <= int(m.group(1)) < 90, out  # a run more of each row, ≥ 30 s each
    assert nothing_stored(db)


def zoo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: float) -> tuple:
    monkeypatch.setenv("PERFLAB_HOME", str(tmp_path / "home"))
    store = Store(tmp_path / "s.db")
    said: list[str] = []
    run = stand_in(0)

    def round_(store: Store, name: str) -> dict[str, int]:
        said.append("(a round ran)")
        return run(store, name)

    res = run_zoo(store, CFG, "z", seed=1, run_round=round_, precision=target, say=said.append)
    return res, said


def test_with_nothing_known_it_says_the_pilot_runs_first_and_its_cap(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    res, said = zoo(tmp_path, monkeypatch, 0.05)
    assert said[0].startswith("the pilot runs first: 6 runs at most (3 of each of 2 ")
    assert "each capped at --timeout 5 min: at most ~30 min" in said[0]
    assert said[1] == "(a round ran)"
    assert res["precision"]["line"].startswith("precision: ")


def test_stored_parts_within_reach_print_the_plan_before_the_pilot(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for spec in specs():
        store_parts(tmp_path / "home", spec, 0.08)
    _, said = zoo(tmp_path, monkeypatch, 0.05)
    m = re.match(r"before the pilot: ~(\d+) more runs after it, ~\d+ s \(planned from stored "
                 r"parts of 2 of 2 measurements; predicted ([\d,]+)–([\d,]+) runs, ~.+ from "
                 r"the parts' 95% intervals\)", said[0])  # fmt: skip
    assert m, said[0]
    assert int(m.group(1)) > 0  # 8 % noise needs more than the 3 pilot runs for ±5 %
    low, high = (int(g.replace(",", "")) for g in m.group(2, 3))
    assert low <= int(m.group(1)) < high  # σ_b² stored as 0–1: the range reaches far
    assert said[1] == "(a round ran)"
