"""``perflab bisect`` as a user runs it: bad input is one line and exit 2 with nothing
stored; a range with no step stops after the confirmation; and one end-to-end bisection
that builds commits of a synthetic clone through ``prepare`` and measures a command that
imports the package."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from toyrepo import git, make_repo

from perflab.bisect import factorial as fx
from perflab.cli import main

ROOT = Path(__file__).resolve().parents[2]
SCORE = (
    'python -c "import random, toybis; toybis.work(); '
    'print(toybis.core.COST * 1000 * (1 + random.gauss(0, 0.01)))"'
)


@pytest.fixture(scope="module")
def clone(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    root = tmp_path_factory.mktemp("bisect-cli") / "clone"
    return root, make_repo(root, n=5, planted={3: 1.5}, tags={0: "v1.0", 4: "v1.1"})


def _covers(low: float, high: float, truth: float) -> bool:
    """The truth within the interval widened by its half-width on each side: a 95 % interval
    misses its truth in one run of 20 (stop 47's CI saw a share interval end at 0.9992 for a
    truth of 1); twice its half-width, ~3.9 standard errors, in one of ~10,000."""
    half = (high - low) / 2
    return low - half <= truth <= high + half


def cli(*args: str, home: Path, env: dict[str, str] | None = None) -> Result:
    return CliRunner().invoke(
        main, ["bisect", *args], env={"PERFLAB_HOME": str(home), **(env or {})}
    )


def _bad(res: Result, says: str, home: Path) -> None:
    assert res.exit_code == 2, res.output
    assert res.stderr.count("\n") == 1 and says in res.stderr, res.stderr
    assert not list((home / "bisect").glob("*.json")) if (home / "bisect").exists() else True


def test_bad_input_is_one_line_exit_2_and_stores_nothing(
    clone: tuple[Path, list[str]], tmp_path: Path
) -> None:
    repo, shas = clone
    home = tmp_path / "home"
    cmd = ["--package", "toybis", "--command", "echo 1", "--build", "tree"]
    plain = tmp_path / "plain"
    plain.mkdir()
    _bad(cli(*cmd, "--range", "a..b", "--repo", str(plain), home=home),
         "not a git clone", home)  # fmt: skip
    _bad(cli("--package", "other", "--range", f"{shas[0]}..{shas[-1]}", "--repo", str(repo),
             "--command", "echo 1", home=home), "not a clone of other", home)  # fmt: skip
    _bad(cli(*cmd, "--range", f"{shas[-1]}..{shas[0]}", "--repo", str(repo), home=home),
         "ends swapped", home)  # fmt: skip
    _bad(cli(*cmd, "--range", f"nosuchref..{shas[-1]}", "--repo", str(repo), home=home),
         "not a commit or release tag", home)  # fmt: skip
    _bad(cli(*cmd, "--range", f"{shas[0]}..{shas[2]}", home=home), "need --repo", home)


def test_an_index_that_cannot_be_reached_is_one_line_exit_2(tmp_path: Path) -> None:
    home = tmp_path / "home"
    env = {"PIP_INDEX_URL": "http://127.0.0.1:9/simple", "PIP_EXTRA_INDEX_URL": "",
           "PIP_FIND_LINKS": "", "PIP_NO_INDEX": ""}  # fmt: skip
    res = cli("--package", "toybis", "--range", "1.0..1.1", "--command", "echo 1",
              "--metric", "us_per_task", home=home, env=env)  # fmt: skip
    _bad(res, "package index", home)


def test_a_range_with_no_step_says_so_and_runs_no_bisection(
    clone: tuple[Path, list[str]], tmp_path: Path
) -> None:
    repo, shas = clone
    home = tmp_path / "home"
    args = ["--package", "toybis", "--range", f"{shas[0]}..{shas[2]}", "--repo", str(repo),
            "--build", "tree", "--command", "echo 100", "--runs", "4",
            "--metric", "us_per_task"]  # fmt: skip
    res = cli(*args, "--json", home=home)
    assert res.exit_code == 0, res.output
    (stage,) = json.loads(res.stdout)["stages"]
    assert stage["outcome"] == "no step" and len(stage["steps"]) == 1
    assert stage["steps"][0]["runs"] == 8 and not stage["culprits"]
    text = cli(*args, home=home).stdout
    assert "no step between the ends: nothing to bisect" in text
    assert "(1 comparisons reused)" in text


@pytest.mark.slow
def test_bisect_builds_commits_of_a_clone_and_names_the_culprit(
    clone: tuple[Path, list[str]], tmp_path: Path
) -> None:
    """Five commits, +50 % planted in the fourth: each commit's tree from `git archive`
    through prepare, the command imports it; the clone is left as it was; a rerun resumes."""
    repo, shas = clone
    home = tmp_path / "home"
    before = git(repo, "status", "--porcelain"), git(repo, "worktree", "list")
    args = ["bisect", "--package", "toybis", "--range", "v1.0..main", "--repo",
            str(repo), "--build", "tree", "--command", SCORE, "--runs", "6", "--explain",
            "--metric", "us_per_task",
            "-o", str(tmp_path / "out")]  # fmt: skip
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "PERFLAB_HOME": str(home)}
    run = [sys.executable, "-m", "perflab", *args]
    res = subprocess.run([*run, "--json"], capture_output=True, text=True, env=env, timeout=300)
    assert res.returncode == 0, res.stderr[-2000:]
    out = json.loads(res.stdout)
    (stage,) = out["stages"]
    assert stage["axis"] == "commits" and stage["outcome"] == "found"
    (c,) = stage["culprits"]
    assert (c["sha"], c["pr"], c["before"]) == (shas[3], 103, shas[2])
    assert 1.35 < c["step"]["ratio"] < 1.65 and c["share_low"] <= 1 <= c["share_high"] + 0.3
    (g,) = [g for g in c["hunk_groups"] if "toybis.core:COST" in g["units"]]
    # reverting COST to the commit before undoes the whole +50 %: ratio ~1/1.5, share ~100 %
    assert g["verdict"] == "faster" and _covers(g["low"], g["high"], 1 / 1.5)
    # one group: 2 cells × at most 6 replicates, looked at after 3 and 6 (factorial.sequential)
    d = c["hunk_design"]
    assert d["most_replicates"] == 6 and d["replicates"] in fx.look_levels(6, 0.05)
    look = fx.look_levels(6, 0.05)[d["replicates"]]
    assert _covers(g["share_low"], g["share_high"], 1) and g["level"] == pytest.approx(look)
    assert (git(repo, "status", "--porcelain"), git(repo, "worktree", "list")) == before
    page = (tmp_path / "out" / "bisect.html").read_text()
    assert "<svg" in page and "slow path" in page and "<img src='bisect-1-commits.png'" in page
    assert (tmp_path / "out" / "bisect-1-commits.png").read_bytes()[:4] == b"\x89PNG"
    assert json.loads((tmp_path / "out" / "bisect.json").read_text())["stages"][0]["figure"]
    again = subprocess.run(run, capture_output=True, text=True, env=env, timeout=300)
    assert again.returncode == 0, again.stderr[-2000:]
    assert f"({len(stage['steps']) + 1} comparisons reused)" in again.stdout  # and the hunk's
    assert "comparing" not in again.stderr and "measuring hunk" not in again.stderr
    assert "PR #103" in again.stdout and "reverted: 0.6" in again.stdout


def test_bisect_treat_benchmarks_the_treated_program_at_every_point(
    clone: tuple[Path, list[str]], tmp_path: Path
) -> None:
    """``--treat``: every run of every point is of the treated program (the command sees
    the treatment; a run it did not reach would not be recorded as treated), and the
    printed reproduction carries it."""
    repo, shas = clone
    home, seen = tmp_path / "home", tmp_path / "seen.txt"
    cmd = f'echo "$PERFLAB_TREATMENTS" >> {seen}; echo 100'
    args = ["--package", "toybis", "--range", f"{shas[0]}..{shas[2]}", "--repo", str(repo),
            "--build", "tree", "--command", cmd, "--metric", "us_per_task", "--runs", "4",
            "--treat", "label:slowpath"]  # fmt: skip
    res = cli(*args, "--json", home=home)
    assert res.exit_code == 0, res.output
    (stage,) = json.loads(res.stdout)["stages"]
    assert stage["steps"][0]["runs"] == 8
    lines = seen.read_text().splitlines()
    assert len(lines) == 8 and all("slowpath" in ln for ln in lines), lines


def test_bisect_treat_refuses_an_unknown_factor_in_one_line(
    clone: tuple[Path, list[str]], tmp_path: Path
) -> None:
    repo, shas = clone
    home = tmp_path / "home"
    res = cli("--package", "toybis", "--range", f"{shas[0]}..{shas[2]}", "--repo", str(repo),
              "--build", "tree", "--command", "echo 1", "--treat", "cfg_2_blockz",
              home=home)  # fmt: skip
    _bad(res, "cfg_2_blockz", home)


def test_bisect_precision_on_a_command_pilots_on_the_first_point(
    clone: tuple[Path, list[str]], tmp_path: Path
) -> None:
    """A command's run is its whole window: without stored parts the first comparison pilots
    the command at its point (the bare base may not import the package), stores the parts
    under the base, and plans runs of the whole command; a second search needs no pilot."""
    repo, shas = clone
    home = tmp_path / "home"
    score = 'python -c "import random; print(1000 * (1 + random.gauss(0, 0.01)))"'
    args = ["--package", "toybis", "--range", f"{shas[0]}..{shas[2]}", "--repo", str(repo),
            "--build", "tree", "--command", score, "--metric", "us_per_task", "--precision", "2%",
            "--max-time", "120"]  # fmt: skip
    res = cli(*args, "--json", home=home)
    assert res.exit_code == 0, res.output
    said = " ".join(res.stderr.split())
    assert "pilot: A/A pair 1/8" in said and "of the whole command" in said
    (stage,) = json.loads(res.stdout)["stages"]
    assert stage["outcome"] == "no step"
    again = cli(*args, "--max-culprits", "2", home=home)  # another search, same parts
    assert again.exit_code == 0 and "pilot" not in again.stderr
