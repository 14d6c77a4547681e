"""``perflab bisect`` reports while it works, on stderr, with or without ``--json`` (an
85-minute ``--json`` bisection printed nothing): the stage, each build, each comparison as it
is decided with the runs and minutes so far; stdout keeps only the JSON. The text lists every
comparison decided, in order, before the culprit. The comparisons are faked from the cost
each commit declares (no run is made), so the test is quick."""

from __future__ import annotations

import json
import re
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from click.testing import CliRunner, Result
from toyrepo import declared_cost, make_repo

import perflab.bisect.driver as driver
from perflab.cli import main
from perflab.compare.gate import Side


@pytest.fixture(scope="module")
def clone(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    root = tmp_path_factory.mktemp("bisect-progress") / "clone"
    return root, make_repo(root, n=9, planted={5: 1.5})


def _fake(repo: Path) -> Any:
    """``compare_points`` answering from the declared costs: 4 runs a side, ±2 %."""

    def compare(a: Side, b: Side, *_: Any, **__: Any) -> Any:
        ca, cb = (declared_cost(repo, Path(s.spec.sources["toybis"]).name) for s in (a, b))
        a.values.extend([ca] * 4)
        b.values.extend([cb] * 4)
        r = cb / ca
        verdict = "slower" if r > 1.05 else "no difference"
        d = SimpleNamespace(ratio=r, ci_low=r / 1.02, ci_high=r * 1.02, verdict=verdict)
        return SimpleNamespace(failed=None, decision=d, precision=None)

    return compare


def _bisect(clone: tuple[Path, list[str]], home: Path, *extra: str) -> Result:
    repo, shas = clone
    return CliRunner().invoke(
        main,
        ["bisect", "--package", "toybis", "--range", f"{shas[0]}..{shas[-1]}", "--repo",
         str(repo), "--build", "tree", "--command", "echo 1", "--metric", "us_per_task", *extra],
        env={"PERFLAB_HOME": str(home)},
    )  # fmt: skip


def test_progress_goes_to_stderr_also_with_json_and_stdout_is_the_json(
    clone: tuple[Path, list[str]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo, shas = clone
    monkeypatch.setattr(driver, "compare_points", _fake(repo))
    res = _bisect(clone, tmp_path / "home", "--json")
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)  # exactly one JSON object: nothing else on stdout
    (stage,) = out["stages"]
    assert [c["key"] for c in stage["culprits"]] == [shas[5]]
    err = res.stderr
    assert "commits: 9 first-parent commits" in err
    assert err.count("confirming the step") == 1 and "preparing " in err
    decided = re.findall(r"^(\w+) .*? → (\w+) .*?: (\S+)× \((\S+)–(\S+)\) ([a-z ]+), (\d+) runs; "
                         r"(\d+) runs, \d+ min so far", err, re.M)  # fmt: skip
    # one line per comparison, as decided, in order, with the running count of runs
    assert len(decided) == len(stage["steps"]) >= 5
    total = 0
    for line, step in zip(decided, stage["steps"], strict=True):
        total += step["runs"]
        assert line[0] == stage["points"][step["a"]]["key"][:10]
        assert line[1] == stage["points"][step["b"]]["key"][:10]
        assert float(line[2]) == pytest.approx(step["ratio"], abs=6e-4)
        assert (line[5], int(line[6]), int(line[7])) == (step["verdict"], step["runs"], total)
    assert re.search(r"^found: 1 culprit\(s\) after \d+ comparisons", err, re.M)
    assert out["minutes"] >= 0


def test_the_text_lists_every_comparison_in_order_before_the_culprit(
    clone: tuple[Path, list[str]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo, shas = clone
    monkeypatch.setattr(driver, "compare_points", _fake(repo))
    home = tmp_path / "home"
    (stage,) = json.loads(_bisect(clone, home, "--json").stdout)["stages"]
    res = _bisect(clone, home)  # every comparison kept: said as such, none run again
    assert res.exit_code == 0, res.output
    assert res.stderr.count("(kept from before)") == len(stage["steps"])
    text = res.stdout.splitlines()
    head = next(i for i, ln in enumerate(text) if ln.strip().startswith("comparisons ("))
    assert text[head + 1].split() == ["comparison", "ratio", "interval", "verdict", "runs"]
    rows = text[head + 2 : head + 2 + len(stage["steps"])]
    for row, step in zip(rows, stage["steps"], strict=True):
        a, b = (stage["points"][step[k]]["key"][:10] for k in ("a", "b"))
        assert row.split()[:3] == [a, "→", b]
        assert f"{step['ratio']:.3f}×" in row and f"{step['low']:.3f}–{step['high']:.3f}" in row
        assert row.split()[-1] == str(step["runs"]) and step["verdict"] in row
    culprit = next(i for i, ln in enumerate(text) if ln.strip().startswith("culprit "))
    assert culprit > head + len(stage["steps"])
    assert "this command: 0 runs" in res.stdout
