"""``--fast``/``--rigorous`` (cli/helpfmt.py) and the old verb names kept as aliases: parsed
as the CLI parses them, nothing run (no engine starts)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click
import pytest
from click.testing import CliRunner

from perflab.cli.app import load_all, main
from perflab.cli.helpfmt import PRESET_SAID, PRESETS

#: What a preset's line would say, by the last ``_parsed`` (said when the verb runs).
SAID: list[str] = []


def _parsed(path: list[str], args: list[str]) -> dict[str, Any]:
    """The verb's keyword arguments for ``perflab PATH ARGS`` (its required options and
    arguments given a placeholder, whatever they are called), as click hands them over; the
    preset's line it would say goes into ``SAID``."""
    load_all()
    cmd: click.Command = main
    for name in path:
        assert isinstance(cmd, click.Group)
        cmd = cmd.commands[name]
    needed: list[str] = []
    for p in cmd.params:
        if p.required:
            needed += ["1"] if isinstance(p, click.Argument) else [p.opts[0], "1"]
    with cmd.make_context(" ".join(["perflab", *path]), [*needed, *args]) as ctx:
        SAID[:] = [ctx.meta[PRESET_SAID]] if PRESET_SAID in ctx.meta else []
        return dict(ctx.params)


@pytest.mark.parametrize("verb", sorted(PRESETS))
@pytest.mark.parametrize("preset", ["fast", "rigorous"])
def test_a_preset_sets_its_values_and_says_so(
    verb: str, preset: str, capsys: pytest.CaptureFixture[str]
) -> None:
    got = _parsed(verb.split(), [f"--{preset}"])
    want = PRESETS[verb][preset]
    assert {k: got[k] for k in want} == want
    assert "fast" not in got and "rigorous" not in got  # the verb never sees the flags
    assert not capsys.readouterr().err  # said when the verb runs, past its checks
    assert len(SAID) == 1 and SAID[0].startswith(f"perflab: --{preset} sets ")
    assert all(f" {v:g}" in SAID[0] for v in want.values())


def test_presets_differ_and_a_flag_given_wins() -> None:
    fast, rigorous = PRESETS["compare"]["fast"], PRESETS["compare"]["rigorous"]
    assert fast["runs"] < rigorous["runs"] and fast["alpha"] > rigorous["alpha"]
    got = _parsed(["compare"], ["--rigorous", "--runs", "9"])
    assert (got["runs"], got["alpha"]) == (9, rigorous["alpha"])
    assert "yours kept: --runs" in SAID[0]
    # --precision plans the runs: the preset leaves them to it (compare refuses both)
    got = _parsed(["compare"], ["--fast", "--precision", "3%"])
    assert got["runs"] is None and got["alpha"] == fast["alpha"]


def test_the_preset_line_comes_after_the_checks_and_before_the_runs(tmp_path: Path) -> None:
    """Bad input with a preset is its error line alone; a verb past its checks says the
    preset first, before its first progress line."""
    env = {"PERFLAB_HOME": str(tmp_path)}
    bad = CliRunner().invoke(main, ["compare", "--fast", "--command", "echo 1", "--runs", "1"],
                             env=env)  # fmt: skip
    assert bad.exit_code == 2 and bad.stderr.strip().splitlines() == [
        "perflab: error: --runs must be at least 2 per side (got 1)"
    ], bad.stderr
    good = CliRunner().invoke(main, ["run", "--fast", "--command", "echo 1"], env=env)
    assert good.exit_code == 0, good.output
    said = good.stderr.strip().splitlines()
    assert said[0] == "perflab: --fast sets --runs 3" and "run 1/3" in said[1]
    assert good.stderr.count("--fast sets") == 1


def test_both_presets_are_one_line_of_bad_input() -> None:
    r = CliRunner().invoke(main, ["run", "--fast", "--rigorous"], prog_name="perflab")
    assert r.exit_code == 2 and "--fast or --rigorous" in r.output
    assert len(r.output.strip().splitlines()) == 1


def test_a_verb_without_a_preset_has_no_flag() -> None:
    r = CliRunner().invoke(main, ["analyze", "--fast"], prog_name="perflab")
    assert r.exit_code == 2 and "--fast" in r.output


def test_calibrate_is_precision_gate_and_says_so_once(tmp_path: Path) -> None:
    """The old verb does what it did (A/A runs replayed through the gate, the runs per side
    stored for compare) under the new name, saying so once; ``precision --gate`` the same."""
    home = tmp_path / "home"
    noisy = "python3 -c 'import random; print(100 * random.lognormvariate(0, 0.02))'"
    args = ["--command", noisy, "--runs", "8", "--simulations", "10", "--json"]
    old = CliRunner().invoke(main, ["calibrate", *args], env={"PERFLAB_HOME": str(home)})
    assert old.exit_code == 0, old.stderr
    assert old.stderr.count("`calibrate` is now `perflab precision --gate`") == 1
    new = CliRunner().invoke(main, ["precision", "--gate", *args], env={"PERFLAB_HOME": str(home)})
    assert new.exit_code == 0 and "calibrate" not in new.stderr, new.stderr
    a, b = json.loads(old.stdout), json.loads(new.stdout)
    assert a.keys() == b.keys() and len(a["values"]) == len(b["values"]) == 8
    assert (home / "calibration.json").is_file()
    hidden = CliRunner().invoke(main, ["--help"]).output
    assert "precision" in hidden and "calibrate" not in hidden


@pytest.mark.parametrize(
    ("args", "wrong"),
    [
        (["--gate", "--windows", "500,8000"], "--windows"),
        (["--simulations", "50"], "--simulations"),
    ],
)
def test_precision_refuses_an_option_of_its_other_mode(
    tmp_path: Path, args: list[str], wrong: str
) -> None:
    r = CliRunner().invoke(
        main, ["precision", "--command", "echo 1", *args], env={"PERFLAB_HOME": str(tmp_path)}
    )
    assert r.exit_code == 2 and f"{wrong} does not apply" in r.stderr, r.output
    assert not any(tmp_path.iterdir())  # nothing run or stored
