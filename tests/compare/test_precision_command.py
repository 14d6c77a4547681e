"""``perflab precision --command``: the command's A/A pilot (its run is its whole window),
what it measured with intervals, where its parts are stored (where ``compare --precision``
finds them, so that plan needs no pilot), and the plan for ``--precision``. A tiny real
command; the comparison that uses the parts is refused on its time, so nothing else runs."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

import perflab.cli  # noqa: F401  (registers the verbs)
from perflab.cli.app import main
from perflab.cli.precision import describe_command
from perflab.compare import command_parts

SCORE = "python3 -c 'print(1000)'"


def cli(home: Path, *args: str) -> Result:
    return CliRunner().invoke(main, list(args), env={"PERFLAB_HOME": str(home)})


def test_precision_pilots_a_command_and_compare_plans_from_what_it_stored(
    tmp_path: Path,
) -> None:
    res = cli(tmp_path, "precision", "--command", SCORE, "--runs", "3", "--precision", "20%",
              "--json")  # fmt: skip
    assert res.exit_code == 0, res.output
    got = json.loads(res.stdout)
    assert got["whole_run"] is True and got["metric"] == "wall_s" and got["runs"] == 6
    lo, hi = got["cv_ci"]
    assert lo <= got["cv"] <= hi and got["cv"] >= 0
    assert got["run_s_ci"][0] <= got["run_s"] <= got["run_s_ci"][1] and got["run_s"] > 0
    assert Path(got["stored"]).is_file() and got["load"]["loadavg_1m"] >= 0
    assert "of the whole command" in got["plan"] and got["plan"].startswith("±20% (--precision)")
    assert set(got["plans"]) == {"0.02", "0.03", "0.05", "0.1"}
    assert "pilot: A/A pair 1/3" in res.stderr
    # compare on the same command finds the parts: no pilot, and an unreachable target is
    # refused on their time before anything runs
    args = ["compare", "--command", SCORE, "--treat-b", "label:same", "--precision", "0.01%",
            "--max-time", "5"]  # fmt: skip
    again = cli(tmp_path, *args)
    assert again.exit_code == 2, again.output
    assert "pilot" not in again.stderr and "would take" in again.stderr


def test_the_text_says_the_cv_and_run_time_with_intervals_and_where_it_is_stored(
    tmp_path: Path,
) -> None:
    res = cli(tmp_path, "precision", "--command", SCORE, "--runs", "2", "--precision", "7%",
              "--max-time", "0.001")  # fmt: skip
    assert res.exit_code == 0, res.output
    out = res.stdout
    assert "CV of one run" in out and "95% CI" in out and "one run" in out
    assert "±7.0% (--precision): " in out
    assert ", `compare` refuses it" in out  # every plan: no run takes under a millisecond
    assert f"stored in {tmp_path / 'precision.json'}" in out


def test_describe_command_from_fitted_parts() -> None:
    found = command_parts.fit([1.0, 1.1, 0.9, 1.0, 1.0, 1.05], [0.5, 0.4, 0.6, 0.5, 0.5, 0.5])
    text = describe_command(found, "wall_s", {"loadavg_1m": 2.0})
    cv = math.expm1(math.sqrt(found.parts.var_between))
    assert f"{cv:.2%}" in text and "3 A/A pairs" in text and "load 2.00" in text
    assert "0.5 s" in text


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--windows", "500,8000"], "--windows does not apply to a command"),
        (["--splits", "4"], "--splits does not apply to a command"),
        (["--runs", "1"], "at least 2"),
        (["--precision", "abc"], "--precision"),
        (["--gate", "--precision", "3%"], "--precision does not apply to --gate"),
        (["--max-time", "0"], "--max-time must be more than 0"),
    ],
)
def test_bad_input_is_one_line_and_nothing_is_run_or_stored(
    tmp_path: Path, args: list[str], says: str
) -> None:
    res = cli(tmp_path, "precision", "--command", SCORE, *args)
    lines = res.stderr.strip().splitlines()
    assert res.exit_code == 2 and len(lines) == 1 and says in lines[0], res.output
    assert not any(tmp_path.iterdir())
