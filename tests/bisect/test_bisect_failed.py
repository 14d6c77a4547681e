"""Issue 43 in ``perflab bisect``: failed runs never become a step. Every run failed, or the
good end failed: nothing can be bisected, and the verb exits 1 with the cause (it exited 0,
"an end does not build or run"). One commit failed: it is skipped and named, never measured
into a step, and the culprit is still found around it."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from toyrepo import make_repo

from perflab.cli import main

CAUSE = "score: us_per_task nan is not a finite number"
#: The score of a commit's tree: its cost, or nan where ``FAIL`` says (k: the commit's number).
SCORE = (
    'python -c "import toybis; k = toybis.core.COMMIT; '
    "print('nan' if {fail} else toybis.core.COST * 1000)\""
)


@pytest.fixture(scope="module")
def clone(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    root = tmp_path_factory.mktemp("bisect-failed") / "clone"
    return root, make_repo(root, n=5, planted={3: 1.5}, numbered=True)


def _bisect(clone: tuple[Path, list[str]], tmp_path: Path, fail: str) -> Result:
    repo, shas = clone
    args = ["bisect", "--package", "toybis", "--range", f"{shas[0]}..{shas[-1]}", "--repo",
            str(repo), "--build", "tree", "--command", SCORE.format(fail=fail), "--runs", "3",
            "--metric", "us_per_task",
            "--min-runs", "2", "--json"]  # fmt: skip
    return CliRunner().invoke(main, args, env={"PERFLAB_HOME": str(tmp_path / "home")})


def _steps_are_measured(stage: dict) -> None:
    for s in stage["steps"]:
        assert all(math.isfinite(s[k]) for k in ("ratio", "low", "high")), s


def test_every_run_failed_exits_1_with_the_cause(
    clone: tuple[Path, list[str]], tmp_path: Path
) -> None:
    res = _bisect(clone, tmp_path, "True")
    assert res.exit_code == 1, res.output
    last = res.stderr.strip().splitlines()[-1]
    assert "an end does not build or run, nothing bisected" in last and CAUSE in last, last
    (stage,) = json.loads(res.stdout)["stages"]
    assert stage["outcome"] == "end failed" and stage["steps"] == [] and stage["culprits"] == []


def test_a_failed_good_end_exits_1_and_names_it(
    clone: tuple[Path, list[str]], tmp_path: Path
) -> None:
    res = _bisect(clone, tmp_path, "k == 0")
    assert res.exit_code == 1 and "tidy 0" in res.stderr and CAUSE in res.stderr, res.output
    (stage,) = json.loads(res.stdout)["stages"]
    assert stage["outcome"] == "end failed" and [s["index"] for s in stage["skipped"]] == [0]


def test_a_failed_middle_commit_is_skipped_and_named(
    clone: tuple[Path, list[str]], tmp_path: Path
) -> None:
    repo, shas = clone
    res = _bisect(clone, tmp_path, "k == 2")
    assert res.exit_code == 0, res.output
    (stage,) = json.loads(res.stdout)["stages"]
    assert [s["index"] for s in stage["skipped"]] == [2] and CAUSE in stage["skipped"][0]["reason"]
    assert all(2 not in (s["a"], s["b"]) for s in stage["steps"])  # no step measured on it
    _steps_are_measured(stage)
    assert [c["sha"] for c in stage["culprits"]] == [shas[3]]
