"""The measured tree's environment: the run's trees and perflab first on PYTHONPATH, its
interpreter first on PATH, a treatment's variables winning over perflab's."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from perflab.prepare.environment import additions, child_env, perflab_source
from perflab.spec import RunSpec


def test_trees_and_perflab_go_first_and_a_bundle_before_them(tmp_path: Path) -> None:
    spec = RunSpec(
        metric="us_per_task",
        command="true",
        treatments=["a", "b=2"],
        env={"PYTHONPATH": "/bundle", "X": "1", "PERFLAB_RUN_DIR": "/mine"},
    )
    trees = (tmp_path / "t1", tmp_path / "t2")
    pythonpath, path, env = additions(spec, "/venv/bin/python", trees)
    assert pythonpath == ("/bundle", str(trees[0]), str(trees[1]), perflab_source())
    assert path == (
        str(trees[0] / "bin"), str(trees[1] / "bin"), "/venv/bin", str(Path(sys.executable).parent)
    )  # fmt: skip
    assert env == {"PERFLAB_TREATMENTS": "a,b=2", "X": "1", "PERFLAB_RUN_DIR": "/mine"}
    base = {"PATH": "/nowhere/bin", "PYTHONPATH": "/old", "HOME": "/h"}
    out = child_env(pythonpath, path, env, tmp_path / "run", base)
    assert out["PYTHONPATH"].split(os.pathsep) == [*pythonpath, "/old"]
    assert out["PATH"].split(os.pathsep) == [*path, "/nowhere/bin"]
    assert out["HOME"] == "/h" and out["X"] == "1"
    assert out["PERFLAB_RUN_DIR"] == "/mine"  # a treatment's own variable wins, as it did
    assert base == {"PATH": "/nowhere/bin", "PYTHONPATH": "/old", "HOME": "/h"}  # not changed


def test_a_plain_run_sets_its_run_dir_and_treatments(tmp_path: Path) -> None:
    pythonpath, path, env = additions(
        RunSpec(metric="us_per_task", command="true"), sys.executable, ()
    )
    out = child_env(pythonpath, path, env, tmp_path / "run", {})
    assert out["PYTHONPATH"] == perflab_source()
    assert out["PERFLAB_RUN_DIR"] == str(tmp_path / "run")
    assert out["PERFLAB_TREATMENTS"] == ""
