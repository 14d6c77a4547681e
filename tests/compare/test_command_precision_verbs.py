"""``--precision`` on a command in every verb that takes it: each plans runs of the whole
command from the command's stored parts and prints the plan, instead of refusing. A tiny real
command, a loose target (20 %) and a small ``--max-time``; where the verb's work after the
plan would build venvs of releases (``explain``) or search (``tune``), a stand-in keeps what
it was handed and stops. ``bisect``: tests/bisect/test_bisect_cli.py
(``test_bisect_precision_on_a_command_pilots_on_the_first_point``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from sidefakes import unbuilt

import perflab.cli  # noqa: F401  (registers the verbs)
from perflab.cli.app import main
from perflab.compare import command_parts
from perflab.errors import PerflabError
from perflab.spec import RunSpec

SCORE = "python3 -c 'print(1000)'"
NOISY = "python3 -c 'import random; print(1000 * random.lognormvariate(0, 0.03))'"
PLANNED = "of the whole command"


class Handed(PerflabError):
    """Raised by a stand-in for a verb's work once it has kept what the verb handed it."""


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """Parts of SCORE (a CV of about 5 %, 0.1 s a run) as its pilot stores them, for the
    metric a command is decided on unless named (wall_s)."""
    found = command_parts.fit([1000.0, 1100.0, 950.0, 1000.0, 1000.0, 1040.0], [0.1] * 6)
    command_parts.save(found, RunSpec(command=SCORE), "wall_s", tmp_path)
    return tmp_path


def cli(home: Path, *args: str) -> Result:
    return CliRunner().invoke(main, list(args), env={"PERFLAB_HOME": str(home)})


def planned(res: Result) -> None:
    """The plan was printed (of runs of the whole command), no pilot ran, nothing refused."""
    said = " ".join(res.output.split())
    assert PLANNED in said and "pilot" not in said, res.output
    assert "cannot honour" not in said and "no measured variance parts" not in said


def test_compare(home: Path) -> None:
    # A/A: a tiny alpha keeps a false "slower" (exit 1) out of the test
    res = cli(home, "compare", "--command", SCORE, "--treat-b", "label:same", "--precision",
              "20%", "--max-time", "30", "--alpha", "0.001", "--json")  # fmt: skip
    assert res.exit_code == 0, res.output
    planned(res)
    got = json.loads(res.stdout)["precision"]
    assert got["plan"]["whole_run"] and got["target"] == pytest.approx(0.2)


def test_history(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """End to end but for the releases' venvs (the command imports nothing of them)."""
    import perflab.cli.history as hv

    monkeypatch.setattr(hv, "prepare", unbuilt)
    res = cli(home, "history", "--package", "toy", "--range", "1.0,1.1", "--command", SCORE,
              "--precision", "20%", "--max-time", "30", "--alpha", "0.001", "--json")  # fmt: skip
    assert res.exit_code == 0, res.output
    planned(res)
    got = json.loads(res.stdout)
    assert got["precision"]["plan"]["whole_run"] and got["precision"]["plan"]["units"] == 2
    assert all(len(r["values"]) >= 2 for r in got["releases"])


def test_explain(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import perflab.api

    kept: dict[str, Any] = {}

    def explain(package: str, a: str, b: str, spec: RunSpec, **kw: Any) -> None:
        kept.update(spec=spec, **kw)
        raise Handed("handed on")

    monkeypatch.setattr(perflab.api, "explain", explain)
    res = cli(home, "explain", "--package", "toy", "--range", "1.0..1.1", "--command", SCORE,
              "--precision", "20%", "--max-time", "30")  # fmt: skip
    assert "handed on" in res.output
    planned(res)
    # a command is decided on its wall time unless --metric names its print
    assert kept["metrics"] == ["wall_s"] and kept["spec"].command == SCORE
    assert kept["runs"] >= 2 and kept["step_looks"] is not None


def test_tune_final_blocks(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import perflab.api

    kept: dict[str, Any] = {}

    def tune(name: str, spec: RunSpec, candidates: list[str], budget: int, **kw: Any) -> None:
        kept.update(spec=spec, **kw)
        raise Handed("handed on")

    monkeypatch.setattr(perflab.api, "tune", tune)
    res = cli(home, "tune", "t", "--command", SCORE, "--factors", "label:x,label:y",
              "--precision", "20%", "--max-time", "30", "--store", str(home / "s.db"))  # fmt: skip
    assert "handed on" in res.output
    planned(res)
    assert kept["precision"] is not None and kept["spec"].command == SCORE


def test_campaign_create(home: Path) -> None:
    res = cli(home, "campaign", "create", "c", "--command", SCORE, "--factors", "label:x",
              "--precision", "20%", "--max-time", "30", "--store", str(home / "s.db"),
              "--json")  # fmt: skip
    assert res.exit_code == 0, res.output
    planned(res)
    made = json.loads(res.stdout.strip().splitlines()[-1])
    assert made["precision"]["plan"]["whole_run"] and made["replicates"] >= 2


@pytest.mark.parametrize(
    ("verb", "first"),
    [
        (["history", "--range", "1.0,1.1"], "toy==1.0"),
        (["explain", "--range", "1.0..1.1"], "toy==1.0"),
    ],
)
def test_without_parts_the_pilot_runs_on_the_first_release(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, verb: list[str], first: str
) -> None:
    """A command of a package's releases may import the package, which the bare base lacks:
    its pilot runs on the first release (made ready as the verb makes it), and its parts are
    stored under the base, which plans the verb's runs (the next plan needs no pilot)."""
    import perflab.api
    import perflab.compare.gate as gate

    made: list[list[str]] = []

    def prepare(spec: RunSpec) -> Any:
        made.append(list(spec.packages))
        return unbuilt(spec)

    def handed(*a: Any, **kw: Any) -> None:
        raise Handed("handed on")

    monkeypatch.setattr(gate, "prepare", prepare)
    monkeypatch.setattr(perflab.api, "explain", handed)
    monkeypatch.setattr("perflab.cli.history.run_history", handed)
    # a printed score with 3 % noise of its own: the plan does not hang on the node's load
    args = [verb[0], "--package", "toy", *verb[1:], "--command", NOISY, "--metric",
            "us_per_task", "--precision", "20%", "--max-time", "120"]  # fmt: skip
    res = cli(tmp_path, *args)
    assert "handed on" in res.output and "pilot: A/A pair 1/8" in res.output, res.output
    assert made == [[first]]  # the pilot's side, made ready once
    assert command_parts.load(RunSpec(command=NOISY), "us_per_task", tmp_path) is not None
    again = cli(tmp_path, *args)
    assert "handed on" in again.output and "pilot" not in again.output
