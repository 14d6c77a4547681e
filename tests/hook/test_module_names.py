"""A distribution whose import name is not its own (PyYAML installs ``yaml``, pyzmq ``zmq``)
is proven by the import of the modules it installs, read from its ``top_level.txt`` or its
``RECORD`` in the run's venv (perflab/hook/seen.py ``release_modules``); and the releases a
run itself asks for (a compare side's ``--package``, explain's release B) are proven like a
package factor's (perflab/hook ``judge_releases``)."""

from __future__ import annotations

import json
import sys
from importlib import metadata
from pathlib import Path

import pytest

from perflab.hook import arm, judge, judge_releases
from perflab.hook.seen import release_modules, seen_ops
from perflab.spec import RunSpec

#: perflab's own venv: its PyYAML and pyzmq are real distributions named unlike their modules.
PYTHON = sys.executable


def _import(module: str, pid: int = 7) -> dict:
    mod = __import__(module)
    return {
        "fact": "import",
        "package": module,
        "file": mod.__file__,
        "pid": pid,
        "argv0": "app.py",
    }


@pytest.mark.parametrize(("dist", "module"), [("PyYAML", "yaml"), ("pyzmq", "zmq")])
def test_a_distribution_is_watched_by_the_module_it_installs(
    tmp_path: Path, dist: str, module: str
) -> None:
    # top_level.txt (PyYAML: yaml, and the private _yaml left out), or RECORD (pyzmq has none)
    assert release_modules(dist, PYTHON) == (module,)
    version = metadata.version(dist)
    ops = {"release_a": seen_ops({"package": {dist: version}})}
    run_dir = tmp_path / "run"
    run_dir.mkdir(mode=0o700)
    arm({}, RunSpec(command="python app.py", hook=ops, python=PYTHON), run_dir)
    assert module in json.loads((run_dir / "treat.json").read_text())["packages"]
    # the process that imported yaml imported PyYAML at the factor's version
    treated, causes = judge(ops, [], [_import(module)], python=PYTHON)
    assert causes == []
    assert treated["release_a"][0]["version"] == version
    # and one that imported another release fails, naming the module it imported
    other = {"release_a": seen_ops({"package": {dist: "0.1"}})}
    _, causes = judge(other, [], [_import(module)], python=PYTHON)
    assert causes and f"imported {module} {version} from" in causes[0], causes


def test_a_namespace_distribution_keeps_its_own_module() -> None:
    assert release_modules("radical.saga", PYTHON) == ("radical.saga",)
    assert release_modules("no-such-dist-here", PYTHON) == ("no_such_dist_here",)


def test_the_runs_own_release_is_proven_in_each_process(tmp_path: Path) -> None:
    version = metadata.version("PyYAML")
    spec = RunSpec(command="python app.py", packages=[f"PyYAML=={version}"], python=PYTHON)
    run_dir = tmp_path / "run"
    run_dir.mkdir(mode=0o700)
    arm({}, spec, run_dir)  # the hook reports the import of the run's own release too
    assert json.loads((run_dir / "treat.json").read_text())["packages"] == ["yaml"]
    proofs, wrong = judge_releases(spec, [_import("yaml", 7), _import("yaml", 8)])
    assert wrong == []
    key = f"PyYAML=={version}"
    assert [p["process"]["pid"] for p in proofs[key]] == [7, 8]
    assert {p["version"] for p in proofs[key]} == {version}
    # a program that never imported it: no proof, said as an empty list (not a failure)
    assert judge_releases(spec, []) == ({key: []}, [])
    # another release imported fails the run with where it came from
    other = RunSpec(command="python app.py", packages=["PyYAML==0.1"], python=PYTHON)
    proofs, wrong = judge_releases(other, [_import("yaml")])
    assert proofs == {} and len(wrong) == 1
    assert (
        wrong[0].startswith("PyYAML==0.1: app.py (pid 7) imported yaml") and "not 0.1" in wrong[0]
    )
    # a source tree has no version to prove
    tree = RunSpec(command="python app.py", packages=[str(tmp_path / "yaml-src")])
    assert judge_releases(tree, [_import("yaml")]) == ({}, [])


def test_explain_reads_the_source_of_the_module_a_distribution_installs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``explain --package PyYAML``: the function-level changes are yaml's (the source the
    program imports), not a package named PyYAML that no one can import."""
    from types import SimpleNamespace

    from perflab.explain import plan

    monkeypatch.setenv("PERFLAB_HOME", str(tmp_path / "home"))
    monkeypatch.setattr(plan, "prepare", lambda spec: SimpleNamespace(python=PYTHON))
    setup = plan.Setup("y", "PyYAML", "6.0", "6.0.1", RunSpec(command="python app.py"), ["x"])
    prep = plan.make_plan(setup)
    assert prep.module == "yaml"
    assert prep.tables["release_a"]["package"] == {"PyYAML": "6.0"}  # the release: pip's name
    plan.add_sources(setup, prep)  # one interpreter for both: yaml's source, unchanged
    assert prep.factors == [] and prep.catalog.name == "factors.toml"
