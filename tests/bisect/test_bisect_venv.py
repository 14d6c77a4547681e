"""``perflab bisect`` with the default ``--build venv``: each commit of a tiny local clone
(a pure-Python package, four commits, the third adds a sleep to its one function) is
extracted by ``git archive`` and pip-installed into its own cached venv through ``prepare``,
whatever version it declares; a ``--command`` run by that venv's Python times the function.
``--explain`` then reverts the culprit's hunk in its installed copy. No engine starts; the
four venvs make it slow (about 4 min on a loaded 2-core host, most of it pip)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from toyrepo import git

ROOT = Path(__file__).resolve().parents[2]
WORK = '''"""The function the commits change."""
import time


def work() -> None:
    """Wait for the device{why}."""
    time.sleep(0.01){sleep}
'''
#: The command's score: the function's own time in µs (the least of five calls: a loaded
#: host's scheduling delays only add), in the venv's interpreter (first on PATH), so the
#: package it imports is the commit's build.
SCORE = (
    'python -c "import timeit, sleepy; '
    'print(min(timeit.repeat(sleepy.work, number=1, repeat=5)) * 1e6)"'
)


def _clone(root: Path) -> list[str]:
    """Four commits of ``sleepy``; commit 2 adds a 40 ms sleep to the 10 ms one (5×)."""
    root.mkdir(parents=True)
    git(root, "init", "-q", "-b", "main")
    (root / "sleepy").mkdir()
    # flit_core, not setuptools: pip installs the build backend into each build's own
    # environment, and flit_core is small (a tree's pip install took ~40% less here)
    (root / "pyproject.toml").write_text(
        '[build-system]\nrequires = ["flit_core>=3.4"]\nbuild-backend = "flit_core.buildapi"\n'
        '[project]\nname = "sleepy"\nversion = "0.1.0.dev0"\ndescription = "a toy"\n'
    )
    (root / "sleepy" / "__init__.py").write_text("from sleepy.core import work\n")
    shas = []
    for k, subject in enumerate(["start", "docs (#11)", "wait for the lock (#12)", "tidy (#13)"]):
        slow = k >= 2
        (root / "sleepy" / "core.py").write_text(WORK.format(
            why=f", commit {k}", sleep="\n    time.sleep(0.04)" if slow else "",
        ))  # fmt: skip
        git(root, "add", "-A")
        git(root, "commit", "-q", "-m", subject)
        shas.append(git(root, "rev-parse", "HEAD").strip())
    return shas


@pytest.mark.slow
def test_bisect_builds_each_commit_in_a_venv_and_finds_the_sleep(tmp_path: Path) -> None:
    repo = tmp_path / "clone"
    shas = _clone(repo)
    home = tmp_path / "home"
    args = ["bisect", "--package", "sleepy", "--range", f"{shas[0]}..main", "--repo",
            str(repo), "--command", SCORE, "--runs", "8", "--min-runs", "3", "--max-culprits", "1",
            "--metric", "us_per_task",
            "--explain", "--json"]  # fmt: skip
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "PERFLAB_HOME": str(home)}
    res = subprocess.run([sys.executable, "-m", "perflab", *args], capture_output=True,
                         text=True, env=env, timeout=1200)  # fmt: skip
    assert res.returncode == 0, res.stderr[-3000:]
    (stage,) = json.loads(res.stdout)["stages"]
    assert stage["outcome"] == "found" and not stage["skipped"], (stage["steps"], stage["notes"])
    (c,) = stage["culprits"]
    assert (c["sha"], c["pr"], c["before"]) == (shas[2], 12, shas[1])
    assert c["step"]["verdict"] == "slower" and c["step"]["low"] > 2
    # every commit measured was built into its own venv from its tree, none from the clone
    venvs = [p for p in (home / "venvs").iterdir() if p.is_dir() and "src-" in p.name]
    built = {p.name.split("src-")[1].split("-")[0] for p in venvs}
    measured = {stage["points"][i]["key"] for s in stage["steps"] for i in (s["a"], s["b"])}
    assert built == measured and len(venvs) == len(measured) >= 3
    assert git(repo, "status", "--porcelain") == ""
    # --explain on a venv build: the culprit's installed package with work() reverted
    (g,) = [g for g in c["hunk_groups"] if "sleepy.core:work" in g["units"]]
    assert g["verdict"] == "faster" and g["high"] < 0.5 and g["share_high"] > 0.5, g
