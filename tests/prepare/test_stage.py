"""``prepare(spec) -> Prepared``: one stage makes what a spec needs before it runs."""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

import pytest

from perflab.errors import PerflabError
from perflab.prepare import Prepared, prepare
from perflab.run.measure import measure
from perflab.spec import RunSpec


@pytest.fixture(autouse=True)
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("PERFLAB_HOME", str(tmp_path / "home"))
    return tmp_path / "home"


def _toy_tree(tmp_path: Path) -> Path:
    tree = tmp_path / "checkout"
    (tree / "src" / "toy").mkdir(parents=True)
    (tree / "src" / "toy" / "__init__.py").write_text("X = 7\n")
    return tree


def test_a_plain_spec_is_prepared_as_it_is(home: Path) -> None:
    spec = RunSpec(target="parsl-threads", workload="noop", tasks=5, env={"A": "1"})
    prepared = prepare(spec)
    assert isinstance(prepared, Prepared)
    assert prepared.spec == spec and prepared.python == sys.executable
    assert (prepared.trees, prepared.transformed, prepared.patched) == ((), (), None)
    assert (prepared.venv, prepared.failed, prepared.unmade) == (None, None, None)
    assert dict(prepared.env) == {"PERFLAB_TREATMENTS": "", "A": "1"}
    assert not home.exists()  # nothing made, not even perflab's home


def test_prepared_is_frozen() -> None:
    prepared = prepare(RunSpec(metric="us_per_task", command="true"))
    with pytest.raises(dataclasses.FrozenInstanceError):
        prepared.python = "/usr/bin/python3"  # type: ignore[misc]
    with pytest.raises(TypeError):
        prepared.env["X"] = "1"  # type: ignore[index]


def test_a_source_tree_becomes_a_tree_first_on_the_run_s_path(tmp_path: Path) -> None:
    tree = _toy_tree(tmp_path)
    spec = RunSpec(
        metric="us_per_task",
        command=f"{sys.executable} -c 'import toy; print(toy.X)'",
        sources={"toy": str(tree)},
        run_root=str(tmp_path / "runs"),
    )
    prepared = prepare(spec)
    [copy] = prepared.trees
    assert (copy / "toy" / "__init__.py").read_text() == "X = 7\n"
    [entry] = prepared.transformed
    assert entry["package"] == "toy" and entry["version"].startswith("tree-")
    assert prepared.pythonpath[0] == str(copy)
    env = prepared.run_env(tmp_path / "run", {})
    assert env["PYTHONPATH"].startswith(str(copy))
    # the run imports the copy, and its record says what was made
    (tmp_path / "runs").mkdir(mode=0o700)
    rec = measure(spec)
    assert rec.status == "ok", rec.error
    assert rec.us_per_task == 7.0  # the score line, printed by the copy
    assert rec.measurement["transformed"] == [entry]
    assert rec.measurement["patched_tree"] is None


def test_a_patch_that_does_not_apply_is_failed_not_raised(tmp_path: Path) -> None:
    diff = tmp_path / "p.diff"
    diff.write_text(
        "--- a/parsl/version.py\n+++ b/parsl/version.py\n@@ -1,1 +1,1 @@\n"
        "-this line is not in the file\n+replacement\n"
    )
    patch = {"package": "parsl", "diff": str(diff), "factor": "p"}
    prepared = prepare(RunSpec(target="parsl-threads", tasks=5, patches=[patch]))
    assert prepared.failed and "does not apply" in prepared.failed
    assert prepared.patched is None and prepared.trees == ()


def test_a_patch_with_a_venv_is_refused_as_before(tmp_path: Path) -> None:
    patch = {"package": "parsl", "diff": str(tmp_path / "p.diff"), "factor": "p"}
    spec = RunSpec(tasks=5, patches=[patch], packages=["parsl==2024.6.3"])
    with pytest.raises(PerflabError, match="cannot be combined"):
        prepare(spec)
