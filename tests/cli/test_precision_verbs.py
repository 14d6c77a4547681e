"""``--precision`` in the verbs beyond compare: one option, one plan (``plan_or_refuse``),
honoured by campaign create (sweeps too), history, explain, tune and the zoo (tests/tune/
test_tune_precision.py, tests/zoo/test_zoo_precision.py), refused in one line (exit 2, nothing
run or stored) for a command target everywhere. Cheap: a command target or stored parts with
nothing run (no engine starts)."""

from __future__ import annotations

import itertools
import json
import math
import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

import perflab.cli  # noqa: F401  (registers the verbs)
from perflab.analysis.reach import design_scale, design_x
from perflab.cli.app import main
from perflab.compare import parts as mp
from perflab.compare import precision as pp
from perflab.compare.calibrate import signature
from perflab.errors import PerflabError
from perflab.spec import RunSpec

#: The synthetic machine's parts: 20 s a run outside the window, 0.5 ms a task, σ_b 3 %.
PARTS = pp.Parts(fixed_s=20.0, task_s=0.0005, var_between=0.03**2, var_within=1.5**2)
SCORE = "python3 -c 'print(1000)'"
#: Three two-level factors of the built-in catalog that an HTEX target takes.
FULL = "cfg_2_blocks,cfg_poll_100,cfg_worker_debug"


def cli(home: Path, *args: str) -> Result:
    return CliRunner().invoke(main, list(args), env={"PERFLAB_HOME": str(home)})


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """A perflab home holding parts for the default benchmark (parsl-htex noop), per metric."""
    for metric in ("us_per_task", "tasks_per_s"):
        m = mp.Measured(PARTS, 12, 8, 250.0, (19, 21), (4e-4, 6e-4), (5e-4, 2e-3), (1.5, 3.0))
        mp.save(m, signature(RunSpec(), metric), tmp_path)
    return tmp_path


def one_line_exit_2(res: Result, *words: str) -> None:
    lines = res.output.strip().splitlines()
    assert res.exit_code == 2 and len(lines) == 1, res.output
    assert all(w in lines[0] for w in words), lines[0]


@pytest.mark.parametrize(
    "verb",
    [
        ["campaign", "create", "c", "--factors", "a,b", "--store"],
        ["explain", "--from", "2024.1.1", "--to", "2025.1.1", "--store"],
        ["history", "--versions", "2024.1.1,2025.1.1", "-o"],
        ["tune", "t", "--factors", "a,b", "--store"],
    ],
)
def test_a_command_target_is_refused_in_one_line(tmp_path: Path, verb: list[str]) -> None:
    out = tmp_path / "out"
    res = cli(
        tmp_path,
        *verb,
        str(out),
        "--metric",
        "us_per_task",
        "--command",
        SCORE,
        "--precision",
        "3%",
    )
    one_line_exit_2(res, "--precision", "a command has no window")
    assert not out.exists()  # nothing stored or written


def test_a_bad_target_or_an_option_it_replaces_is_refused(home: Path) -> None:
    one_line_exit_2(cli(home, "history", "--versions", "1,2", "--precision", "x"), "--precision")
    res = cli(home, "history", "--versions", "1,2", "--precision", "3%", "--runs", "5")
    one_line_exit_2(res, "drop --runs")
    res = cli(home, "campaign", "create", "c", "--factors", "cfg_2_blocks", "--precision", "3%",
              "-n", "9", "--store", str(home / "s.db"))  # fmt: skip
    one_line_exit_2(res, "drop --tasks")
    res = cli(home, "explain", "--from", "1", "--to", "2", "--by", "wall_s", "--precision", "3%")
    one_line_exit_2(res, "no measured variance parts", "wall_s", "perflab precision")


def test_an_unreachable_target_names_its_time_and_runs_nothing(home: Path) -> None:
    res = cli(home, "history", "--versions", "1,2,3", "--precision", "0.2%", "--max-time", "600")
    one_line_exit_2(res, "would take ~", "3 × ", "--max-time 10 min")
    res = cli(home, "explain", "--from", "1", "--to", "2", "--precision", "0.2%")
    one_line_exit_2(res, "would take ~", "--max-time 60 min")


def test_campaign_create_plans_the_runs_of_each_set_for_the_design(home: Path) -> None:
    """A 2³ full factorial: each effect has a quarter of a pair's variance per replicate, so
    the plan's pairs are its replicates and its window the parts' best; stored, and the
    status then names the campaign's own target."""
    store = str(home / "s.db")
    args = ["campaign", "create", "c", "--factors", FULL, "--design", "full"]
    res = cli(home, *args, "--precision", "2%", "--store", store, "--json")
    assert res.exit_code == 0, res.output
    made = json.loads(res.output.strip().splitlines()[-1])
    full = [
        [f for f, on in zip("abc", row, strict=True) if on]
        for row in itertools.product([0, 1], repeat=3)
    ]
    scale = design_scale(design_x(full, list("abc")), list("abc"))
    assert scale == pytest.approx(0.25)
    scaled = pp.Parts(PARTS.fixed_s, PARTS.task_s, PARTS.var_between * scale,
                      PARTS.var_within * scale)  # fmt: skip
    want = pp.plan(scaled, 0.02, 0.05)
    assert made["replicates"] == want.pairs and made["base"]["tasks"] == want.tasks
    assert made["counts"]["planned"] == 8 * want.pairs and made["precision"]["plan"]["units"] == 8
    assert made["precision"]["plan"]["wall_s"] == pytest.approx(
        8 * want.pairs * PARTS.run_s(want.tasks)
    )
    assert made["precision"]["plan"]["half_width"] <= 0.02 and made["base"]["time_s"] is None
    # the effect's half-width the plan expects, from its variance: t · √(var_run · 4/N)
    n_runs = 8 * want.pairs
    hw = pp.t_quantile(0.05, want.pairs - 1) * math.sqrt(PARTS.var_run(want.tasks) * 4 / n_runs)
    assert made["precision"]["plan"]["half_width"] == pytest.approx(math.expm1(hw))
    # its range: the parts' interval ends, scaled as the plan's variance is (plan_range)
    hi_var = (2e-3 + 3.0 / want.tasks) * scale
    top = pp.pairs_needed(2 * hi_var, pp.log_half(0.02), 0.05)
    assert made["precision"]["plan"]["pairs_range"][1] == max(top, want.pairs) > want.pairs
    assert "runs (predicted " in made["precision"]["plan"]["line"]
    st = cli(home, "campaign", "status", "c", "--store", store, "--json")
    assert json.loads(st.output)["precision"]["target"] == 0.02


def test_a_sweep_plans_each_level_against_its_base_like_a_pair(home: Path) -> None:
    store = str(home / "s.db")
    res = cli(home, "campaign", "create", "s", "--design", "sweep", "--factors",
              "workers=1..4", "--precision", "5%", "--store", store, "--json")  # fmt: skip
    assert res.exit_code == 0, res.output
    made = json.loads(res.output.strip().splitlines()[-1])
    want = pp.plan(PARTS, 0.05, 0.05)
    assert made["replicates"] == want.pairs and made["base"]["tasks"] == want.tasks
    with sqlite3.connect(store) as db:
        (runs,) = db.execute("SELECT COUNT(*) FROM planned WHERE campaign='s'").fetchone()
    assert runs == made["sets"] * want.pairs


class Handed(PerflabError):
    """Raised by a stand-in for the verb's work, once it has kept what the CLI handed it."""


def test_history_and_explain_hand_on_the_planned_runs_and_window(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import perflab.api
    import perflab.cli.history as hv

    got: dict[str, tuple] = {}

    def history(package: str, wanted: list[str], spec: RunSpec, runs: int, *a: object) -> None:
        got["history"] = (len(wanted), spec.tasks, spec.time_s, runs)
        raise Handed

    def explain(package: str, a: str, b: str, spec: RunSpec, **kw: object) -> None:
        got["explain"] = (2, spec.tasks, spec.time_s, kw["runs"])
        raise Handed

    monkeypatch.setattr(hv, "run_history", history)
    monkeypatch.setattr(perflab.api, "explain", explain)
    res = cli(home, "history", "--versions", "1,2,3", "--precision", "5%", "--alpha", "0.1")
    assert res.exit_code == 2 and "plan: 3 × " in res.output
    res = cli(home, "explain", "--from", "1", "--to", "2", "--precision", "4%")
    assert res.exit_code == 2 and "plan of the step: " in res.output
    assert "runs (predicted " in res.output  # the parts' range, as compare's plan
    # per release (and per round), the plan of a pair at the verb's alpha: 3 releases cost
    # 3/2 of a comparison, which does not move the best window
    for verb, target, alpha in (("history", 0.05, 0.1), ("explain", 0.04, 0.05)):
        want = pp.plan(PARTS, target, alpha)
        assert got[verb][1:] == (want.tasks, None, want.pairs)
