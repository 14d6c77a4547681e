"""A command's private venv (a package factor on a user's program, a compare side's
``--package``, explain's releases) holds the asked release and what pip brings with it, plus
psutil: none of perflab's own dependencies and no pin of an engine's packages (the program
brings its own; perflab itself comes from PYTHONPATH). An engine target's venv pins its
engine's packages to the versions installed here (prepare/venvs.py)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from perflab.factors.catalog import load_catalogs
from perflab.factors.treat import treat
from perflab.prepare import venvs
from perflab.spec import RunSpec


@pytest.fixture
def pip_asked(monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    """What each venv build would have pip install (nothing is installed)."""
    asked: list[list[str]] = []

    def build(base: str, reqs: list[str], dest: Path) -> None:
        asked.append(list(reqs))
        dest.mkdir(parents=True)
        (dest / venvs.MARKER).write_text(json.dumps({"installed": {}}))

    monkeypatch.setattr(venvs, "_build", build)
    return asked


def test_a_package_factor_on_a_command_asks_pip_for_that_release_and_psutil(
    tmp_path: Path, pip_asked: list[list[str]]
) -> None:
    cat = tmp_path / "cat.toml"
    cat.write_text('[factor.yaml_old]\ncategory = "environment"\npackage = { PyYAML = "6.0.1" }\n')
    spec = treat(
        RunSpec(metric="us_per_task", command="python app.py"),
        "yaml_old",
        load_catalogs([str(cat)]),
    )
    venvs.in_venv(spec, tmp_path / "venvs")
    assert pip_asked == [["PyYAML==6.0.1", "psutil"]]


def test_an_engine_target_pins_its_engines_packages_beside_the_release(
    tmp_path: Path, pip_asked: list[list[str]]
) -> None:
    venvs.in_venv(
        RunSpec(metric="us_per_task", command="python app.py", packages=["six==1.16.0"]),
        tmp_path / "v",
    )
    venvs.in_venv(RunSpec(target="dask", packages=["six==1.16.0"]), tmp_path / "v")
    command, engine = pip_asked
    assert command == ["six==1.16.0", "psutil"]
    assert any(r.startswith("distributed==") for r in engine)  # the engine's, pinned
    # another interpreter's venv for a command: the same, nothing of perflab's
    venvs.in_venv(
        RunSpec(metric="us_per_task", command="python app.py", venv_base=sys.executable),
        tmp_path / "w",
    )
    assert pip_asked[-1] == ["psutil"]
