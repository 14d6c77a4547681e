"""What the tests of a user's own program share: his folder with copies of the apps, and a
spec of a command run in it."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from perflab import RunSpec
from perflab.factors.catalog import load_catalogs
from perflab.factors.treat import treat

APPS = Path(__file__).parent / "apps"


@pytest.fixture
def work(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The user's folder holding copies of the apps; perflab's home and runs beside it."""
    for app in APPS.glob("*.py"):
        shutil.copy(app, tmp_path / app.name)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PERFLAB_HOME", str(tmp_path / ".perflab"))
    (tmp_path / "runs").mkdir(mode=0o700)
    return tmp_path


def spec_for(work: Path, command: str, treatments: str = "", **kw) -> RunSpec:
    """``command`` run in ``work``, treated with ``treatments`` (none if empty)."""
    spec = RunSpec(command=command, cwd=str(work), run_root=str(work / "runs"), **kw)
    return treat(spec, treatments, load_catalogs()) if treatments else spec
