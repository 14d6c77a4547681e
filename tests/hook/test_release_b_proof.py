"""The release a command's run asks for itself (explain's release B, a compare side's
``--package``) is proven like release A's package factor: each Python process's import of it
with the version beside the file, another release imported fails the run; and ``explain``
fails its step when a side's release was imported by no process of the program
(perflab/hook ``judge_releases``, explain/driver.py ``release_proofs``)."""

from __future__ import annotations

import sys
from dataclasses import replace
from importlib import metadata
from pathlib import Path
from types import SimpleNamespace

import pytest
import userprogram

from perflab import measure
from perflab.explain.driver import release_proofs
from perflab.explain.plan import Setup
from perflab.prepare import stage
from perflab.spec import RunSpec

work = userprogram.work  # the fixture: the user's folder

YAML = metadata.version("PyYAML")
#: The user's program: it imports PyYAML (as ``yaml``) in itself and in a child process.
APP = """import subprocess, sys
import yaml
subprocess.run([sys.executable, "-c", "import yaml"], check=True)
print(len(yaml.safe_dump({"a": 1})))
"""


@pytest.fixture
def venv_here(monkeypatch: pytest.MonkeyPatch) -> None:
    """The run's private venv is perflab's own (its PyYAML is the release asked for): no pip."""
    monkeypatch.setattr(
        stage, "in_venv", lambda spec, root, program=None: replace(spec, python=sys.executable)
    )


@pytest.mark.slow  # two real runs of a command (no engine), seconds
def test_each_process_of_the_program_imported_the_runs_release(work: Path, venv_here: None) -> None:
    (work / "yaml_app.py").write_text(APP)
    spec = userprogram.spec_for(work, "python yaml_app.py", packages=[f"PyYAML=={YAML}"])
    rec = measure(spec)
    assert rec.status == "ok", rec.error
    proof = rec.measurement["releases"][f"PyYAML=={YAML}"]
    assert len({p["process"]["pid"] for p in proof}) == 2  # the script and its child
    assert {p["version"] for p in proof} == {YAML}
    assert all(p["imported"].endswith("yaml/__init__.py") for p in proof)
    # a release other than the one imported: the run fails, naming where it came from
    rec = measure(replace(spec, packages=["PyYAML==0.1"]))
    assert rec.status == "failed" and "releases" not in rec.measurement
    assert rec.error.startswith("the command imported another release than the run's:")
    assert f"imported yaml {YAML} from" in rec.measurement["wrong_release"][0]


def _rec(measurement: dict) -> SimpleNamespace:
    return SimpleNamespace(status="ok", measurement=measurement)


def test_explains_step_reports_both_sides_release_and_fails_an_unproven_one() -> None:
    setup = Setup("e", "toy", "1.0", "2.0", RunSpec(command="python app.py"), ["wall_s"])
    a_proof = [{"process": {"pid": 1, "argv0": "app.py"}, "imported": "x", "version": "1.0"}]
    b_proof = [{"process": {"pid": 2, "argv0": "app.py"}, "imported": "y", "version": "2.0"}]
    plan = [("A", 0, ["release_a"]), ("B", 0, []), ("A", 1, ["release_a"]), ("B", 1, [])]
    rows = [
        (["release_a"], _rec({"treated": {"release_a": a_proof}})),
        ([], _rec({"releases": {"toy==2.0": b_proof}})),
        (["release_a"], _rec({"treated": {"release_a": a_proof}})),
        ([], _rec({"releases": {"toy==2.0": b_proof}})),
    ]
    got = release_proofs(plan, rows, setup)
    assert got["A"] == {"release": "1.0", "runs": 2, "proven": 2, "versions": ["1.0"],
                        "processes": ["app.py"]}  # fmt: skip
    assert got["B"]["versions"] == ["2.0"] and got["B"]["proven"] == 2
    # a B run where no process imported the package proves nothing: the step fails
    rows[3] = ([], _rec({"releases": {"toy==2.0": []}}))
    got = release_proofs(plan, rows, setup)
    assert got["B"]["unproven"] == (
        "release B (toy 2.0): in 1 of 2 runs no Python process of the command imported it"
    )
    assert "unproven" not in got["A"]
