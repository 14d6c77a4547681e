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
from perflab.cli.helpfmt import PRESETS


def _parsed(path: list[str], args: list[str]) -> dict[str, Any]:
    """The verb's keyword arguments for ``perflab PATH ARGS`` (its required options and
    arguments given a placeholder, whatever they are called), as click hands them over."""
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
    said = capsys.readouterr().err.strip().splitlines()
    assert len(said) == 1 and said[0].startswith(f"perflab: --{preset} sets ")
    assert all(f" {v:g}" in said[0] for v in want.values())


def test_presets_differ_and_a_flag_given_wins(capsys: pytest.CaptureFixture[str]) -> None:
    fast, rigorous = PRESETS["compare"]["fast"], PRESETS["compare"]["rigorous"]
    assert fast["runs"] < rigorous["runs"] and fast["alpha"] > rigorous["alpha"]
    got = _parsed(["compare"], ["--rigorous", "--runs", "9"])
    assert (got["runs"], got["alpha"]) == (9, rigorous["alpha"])
    assert "yours kept: --runs" in capsys.readouterr().err
    # --precision plans the runs: the preset leaves them to it (compare refuses both)
    got = _parsed(["compare"], ["--fast", "--precision", "3%"])
    assert got["runs"] is None and got["alpha"] == fast["alpha"]


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
