"""``--precision`` on a command: the pilot's parts, their interval, where they are stored,
the plan of runs of the whole command, the looks that go on until the time budget, and the
one-line refusal of an unreachable target (exit 2, naming the time, nothing run)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

import perflab.cli  # noqa: F401  (registers the verbs)
from perflab.cli.app import main
from perflab.compare import busy, command_parts
from perflab.compare import precision as pp
from perflab.errors import PerflabError
from perflab.spec import RunSpec

SCORE = "python3 -c 'print(1000)'"


def aa(sigma: float, pairs: int, rng: np.random.Generator) -> list[float]:
    return list(1000.0 * np.exp(rng.normal(0.0, sigma, 2 * pairs)))


def test_the_pilots_variance_interval_covers_the_truth() -> None:
    """Over many seeds the χ² interval of a run's log variance covers the true σ² about 95 %
    of the time (a wrong degrees-of-freedom count or a wrong factor of 2 would not)."""
    rng = np.random.default_rng(1)
    sigma, seeds = 0.04, 600
    hits = 0
    for _ in range(seeds):
        got = command_parts.fit(aa(sigma, 5, rng), [0.3] * 10)
        lo, hi = got.between_ci
        hits += lo <= sigma**2 <= hi
    assert 0.92 <= hits / seeds <= 0.98


def test_a_commands_plan_is_runs_of_the_whole_command() -> None:
    got = command_parts.fit(aa(0.05, 5, np.random.default_rng(2)), [0.5] * 10)
    assert got.whole_run and got.bounds() == (1, 1)
    pl = pp.plan(got.parts, 0.04, pp.planned_level(0.05), got.bounds())
    assert pl.tasks == 1 and pl.pairs >= 2
    assert math.isclose(pl.wall_s, 2 * pl.pairs * 0.5, rel_tol=1e-9)


def test_a_pilot_needs_two_pairs_and_positive_values() -> None:
    with pytest.raises(PerflabError, match="at least 2 A/A pairs"):
        command_parts.fit([1.0, 1.0, 1.0], [0.1] * 3)
    with pytest.raises(PerflabError, match="not > 0"):
        command_parts.fit([1.0, 0.0, 1.0, 1.0], [0.1] * 4)


def test_parts_are_stored_per_command_and_environment(tmp_path: Path) -> None:
    got = command_parts.fit([1.0, 1.1, 0.9, 1.0], [0.1] * 4)
    spec = RunSpec(command=SCORE, cwd=str(tmp_path))
    command_parts.save(got, spec, "wall_s", tmp_path)
    assert command_parts.load(spec, "wall_s", tmp_path) is not None
    other_env = RunSpec(command=SCORE, cwd=str(tmp_path), env={"OMP_NUM_THREADS": "1"})
    other_cwd = RunSpec(command=SCORE, cwd=str(tmp_path / "x"))
    other_cmd = RunSpec(command=SCORE + " ", cwd=str(tmp_path))
    for spec_b in (other_env, other_cwd, other_cmd):
        assert command_parts.load(spec_b, "wall_s", tmp_path) is None
    # perflab's own per-run variables do not make another environment
    mine = RunSpec(command=SCORE, cwd=str(tmp_path), env={"PERFLAB_RUN_DIR": "/tmp/r1"})
    assert command_parts.load(mine, "wall_s", tmp_path) is not None


def test_long_looks_spend_at_most_alpha_and_end_at_the_budget() -> None:
    levels = busy.long_looks(4, 12, 900, 0.05)
    assert max(levels) == 900 and 12 in levels
    assert sum(levels.values()) <= 0.05 + 1e-12
    assert len(levels) < 20  # ~1.5× apart, not every ABBA block
    # just past the plan, a look within 20 % of it (half the comparisons need a little more)
    assert min(k for k in levels if k > 12) <= 12 * 1.2
    assert min(k for k in busy.long_looks(4, 137, 2000, 0.05) if k > 137) <= 137 * 1.2
    assert busy.pairs_within(60.0, 0.5, 12) == 60
    assert busy.pairs_within(1.0, 0.5, 12) == 12


def test_the_too_noisy_sentence_says_cv_and_load() -> None:
    line = busy.too_noisy(0.03, 600.0, 0.12, {"loadavg_1m": 3.5, "cpu_some_avg10": 60.0})
    assert "too noisy for ±3.0%" in line and "CV 12.0%" in line
    assert "load 3.50" in line and "60 %" in line


def test_cv_of_paired_runs() -> None:
    rng = np.random.default_rng(3)
    a = list(np.exp(rng.normal(0, 0.1, 4000)))
    b = list(np.exp(rng.normal(0, 0.1, 4000)))
    assert math.isclose(command_parts.cv_of(a, b), math.expm1(0.1), rel_tol=0.05)
    assert math.isnan(command_parts.cv_of([1.0], [1.0]))


def test_an_unreachable_target_names_the_time_and_runs_nothing(tmp_path: Path) -> None:
    got = command_parts.fit([1000.0, 1100.0, 950.0, 1000.0, 1000.0, 1040.0], [0.1] * 6)
    command_parts.save(got, RunSpec(command=SCORE), "us_per_task", tmp_path)
    args = ["compare", "--command", SCORE, "--precision", "0.01%", "--max-time", "60"]
    res = CliRunner().invoke(main, args, env={"PERFLAB_HOME": str(tmp_path)})
    assert res.exit_code == 2, res.output
    assert "would take" in res.output and "more than --max-time 60 s" in res.output
    assert not (tmp_path / "runs").exists() or not any((tmp_path / "runs").iterdir())


def test_compare_plans_a_command_from_its_pilot_and_stores_it(tmp_path: Path) -> None:
    """A real command, no stored parts: the pilot runs, the plan is printed before the runs,
    the result says what it reached against the plan and the load; the parts are stored so
    the next plan needs no pilot. The score it prints has a 3 % noise of its own, so the
    plan does not depend on how busy the node is (its wall time would)."""
    env = {"PERFLAB_HOME": str(tmp_path)}
    noisy = "python3 -c 'import random; print(1000 * random.lognormvariate(0, 0.03))'"
    args = ["compare", "--command", noisy, "--metric", "us_per_task", "--precision", "5%",
            "--max-time", "120", "--json"]  # fmt: skip
    res = CliRunner().invoke(main, args, env=env)
    assert res.exit_code == 0, res.output
    said = " ".join(res.stderr.split())  # the console wraps long lines
    assert "pilot: A/A pair 1/8" in said and "plan: " in said
    assert said.index("plan: ") < said.index("look at")
    assert "of the whole command" in said
    import json

    out = json.loads(res.stdout)
    assert out["precision"]["plan"]["whole_run"] is True
    assert out["precision"]["load"]["loadavg_1m"] >= 0
    again = CliRunner().invoke(main, args, env=env)
    assert again.exit_code == 0 and "pilot" not in again.stderr


def test_an_undecided_comparison_goes_on_until_the_budget_and_says_the_node_is_too_noisy(
    tmp_path: Path,
) -> None:
    """Parts that promise a quiet node (a 0.1 % CV), a command 30 % noisy: the plan is a few
    pairs, the comparison runs past them until --max-time (not a fixed cap), and ends saying
    the node is too noisy for the target, with the CV measured and the load."""
    import json

    noisy = "python3 -c 'import random; print(1000 * random.lognormvariate(0, 0.3))'"
    quiet = command_parts.fit([1000.0, 1001.0, 1000.0, 999.0, 1000.0, 1000.5], [0.3] * 6)
    command_parts.save(quiet, RunSpec(command=noisy), "us_per_task", tmp_path)
    args = ["compare", "--command", noisy, "--metric", "us_per_task", "--precision", "2%",
            "--max-time", "20", "--json"]  # fmt: skip
    res = CliRunner().invoke(main, args, env={"PERFLAB_HOME": str(tmp_path)})
    assert res.exit_code == 0, res.output
    p = json.loads(res.stdout)["precision"]
    assert p["stopped"] in ("time budget", "most runs") and p["half_width"] > 0.02
    assert len(json.loads(res.stdout)["a"]["values"]) > p["plan"]["pairs"]
    assert "too noisy for ±2.0%" in p["too_noisy"] and "measured CV" in p["too_noisy"]
    assert p["cv"] > 0.1 and p["load"]["loadavg_1m"] >= 0


def test_a_commands_parts_pool_a_comparisons_pairs() -> None:
    """``--update-parts`` on a command: the pilot's A/A variance (k pairs, k degrees of
    freedom) and a comparison's (var(d)/2 on k − 1: its mean is the effect) add by their
    sums of squares; the pooled interval is narrower and still a command's (whole run)."""
    from perflab.compare import refine

    rng = np.random.default_rng(11)
    pilot = command_parts.fit(aa(0.05, 8, rng), [0.2] * 16)
    a = list(1000.0 * np.exp(rng.normal(0.0, 0.10, 60)))
    b = list(1100.0 * np.exp(rng.normal(0.0, 0.10, 60)))  # a real effect, not counted as noise
    new = refine.from_comparison(a, b, [0.3] * 120, command_parts.WHOLE_RUN)
    pooled = refine.pool(pilot, new)
    assert pooled.whole_run and pooled.window == command_parts.WHOLE_RUN
    want = (pilot.parts.var_between * 8 + new.var * 59) / 67
    assert pooled.parts.var_between == pytest.approx(want, rel=1e-9)
    assert pooled.parts.fixed_s == pytest.approx((0.2 * 16 + 0.3 * 120) / 136, rel=1e-9)
    lo, hi = pooled.between_ci
    assert lo < pooled.parts.var_between < hi
    assert hi - lo < pilot.between_ci[1] - pilot.between_ci[0]


def test_compare_update_parts_refines_a_commands_stored_parts(tmp_path: Path) -> None:
    """A real command's comparison with --update-parts pools its pairs into the parts stored
    for it (under the command and its environment), so the next plan is made from both."""
    env = {"PERFLAB_HOME": str(tmp_path)}
    noisy = "python3 -c 'import random; print(1000 * random.lognormvariate(0, 0.03))'"
    got = command_parts.fit(aa(0.03, 8, np.random.default_rng(2)), [0.05] * 16)
    command_parts.save(got, RunSpec(command=noisy), "us_per_task", tmp_path)
    args = ["compare", "--command", noisy, "--metric", "us_per_task", "--precision", "5%",
            "--max-time", "120", "--update-parts"]  # fmt: skip
    res = CliRunner().invoke(main, args, env=env)
    assert res.exit_code == 0, res.output
    said = " ".join(res.stderr.split())
    assert "parts updated" in said and "pairs of the whole command" in said
    assert "σ_w²" not in said  # a command has no window
    after = command_parts.load(RunSpec(command=noisy), "us_per_task", tmp_path)
    assert after is not None and after.whole_run
    assert after.runs > got.runs and after.observations[0]["df"] > 8
