"""Interpreter factors for free-threaded and JIT builds: the finder and the levels.

This machine has no free-threaded or JIT CPython (pyenv 3.12.1, 3.13.0, both default
builds; Debian 12 packages none), so the builds are laid out as files: an executable by the
build's name and the sysconfig data a build of that kind installs beside it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from perflab.errors import PerflabError
from perflab.factors.catalog import interpreter_catalog
from perflab.factors.kinds import interpreter
from perflab.factors.treat import treat
from perflab.spec import RunSpec


def _build(root: Path, version: str, name: str, config_args: str = "", gil: int = 0) -> Path:
    prefix = root / "versions" / version
    exe = prefix / "bin" / name
    exe.parent.mkdir(parents=True, exist_ok=True)
    exe.write_text("#!/bin/sh\n")
    exe.chmod(0o755)
    lib = prefix / "lib" / name
    lib.mkdir(parents=True, exist_ok=True)
    (lib / "_sysconfigdata__linux_x86_64-linux-gnu.py").write_text(
        f"build_time_vars = {{'CONFIG_ARGS': \"'--prefix={prefix}' {config_args}\", "
        f"'Py_GIL_DISABLED': {gil}}}\n"
    )
    return exe


@pytest.fixture
def machine(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    _build(tmp_path, "3.12.1", "python3.12")
    _build(tmp_path, "3.13.0", "python3.13")
    _build(tmp_path, "3.13.1t", "python3.13t", "'--disable-gil'", gil=1)
    _build(tmp_path, "3.13.0t", "python3.13t", "'--disable-gil'", gil=1)  # older patch
    _build(tmp_path, "3.14.0", "python3.14", "'--enable-experimental-jit=yes-off'")
    _build(tmp_path, "3.14.1", "python3.14-config")  # not an interpreter
    monkeypatch.setattr(interpreter, "SEARCH", (str(tmp_path / "versions/*/bin/python3.*"),))
    return tmp_path


def test_finder_keeps_free_threaded_builds_apart(machine: Path) -> None:
    found = interpreter.discovered_interpreters()
    assert list(found) == ["3.12", "3.13", "3.13t", "3.14"]
    assert "3.13.1t/bin/python3.13t" in found["3.13t"]  # the newest patch of the build
    assert "3.13.0/bin/python3.13" in found["3.13"]


def test_build_flags_come_from_the_builds_sysconfig(machine: Path) -> None:
    found = interpreter.discovered_interpreters()
    flags = {v: interpreter.build_flags(p, v) for v, p in found.items()}
    assert flags["3.13t"] == {"free_threaded": True, "jit": False}
    assert flags["3.14"] == {"free_threaded": False, "jit": True}
    assert flags["3.13"] == {"free_threaded": False, "jit": False}
    # JIT configured off (=no) or as the tier-2 interpreter only: not a JIT build
    for args in ("'--enable-experimental-jit=no'", "'--enable-experimental-jit=interpreter'"):
        exe = _build(machine, "3.15.0", "python3.15", args)
        assert not interpreter.build_flags(str(exe), "3.15")["jit"]
    exe = _build(machine, "3.15.0", "python3.15", "'--enable-experimental-jit'")
    assert interpreter.build_flags(str(exe), "3.15")["jit"]


def test_levels_toggle_the_gil_and_the_jit(machine: Path) -> None:
    tables = interpreter.interpreter_factors()
    assert set(tables) == {"python3.12", "python3.13", "python3.13t", "python3.14"}
    assert "levels" not in tables["python3.13"]
    assert tables["python3.13t"]["env"] == {"PYTHON_GIL": "{level}"}
    assert tables["python3.14"]["env"] == {"PYTHON_JIT": "{level}"}
    assert "python3.13" in tables["python3.13t"]["conflicts"]
    cat = interpreter_catalog()
    ft = treat(RunSpec(tasks=10), "python3.13t=0", cat)
    assert ft.env["PYTHON_GIL"] == "0" and ft.venv_base == tables["python3.13t"]["python"]["path"]
    assert treat(RunSpec(tasks=10), "python3.14=1", cat).env["PYTHON_JIT"] == "1"
    assert "PYTHON_GIL" not in treat(RunSpec(tasks=10), "python3.13", cat).env
    with pytest.raises(PerflabError, match="needs a level"):
        treat(RunSpec(tasks=10), "python3.13t", cat)
    with pytest.raises(PerflabError, match="no level"):
        treat(RunSpec(tasks=10), "python3.13t=2", cat)
