"""Environments as factors: private cached venvs, package versions, interpreters present."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT
from perflab.errors import PerflabError
from perflab.factors.catalog import load_catalog, load_catalogs
from perflab.factors.kinds import interpreter
from perflab.factors.requirements import check_requirement
from perflab.factors.treat import treat
from perflab.prepare.venvs import MARKER, ensure_venv
from perflab.run.measure import measure
from perflab.spec import RunSpec


def test_requirements_are_checked_before_anything_is_installed(tmp_path: Path) -> None:
    assert check_requirement("parsl == 2024.6.3") == "parsl==2024.6.3"
    assert check_requirement("psutil") == "psutil"
    for bad in ("parsl=!1", "-e x", "parsl==1;rm"):
        with pytest.raises(PerflabError, match="not NAME or NAME==VERSION"):
            check_requirement(bad)
    with pytest.raises(PerflabError, match="no pyproject.toml or setup.py"):
        check_requirement(str(tmp_path))


def test_package_factor_asks_for_a_private_venv(tmp_path: Path) -> None:
    cat = tmp_path / "c.toml"
    cat.write_text(
        '[factor.parsl_release]\ncategory = "environment"\nlevels = ["2024.6.3", "2025.6.2"]\n'
        'package = { parsl = "{level}" }\n'
    )
    spec = treat(RunSpec(tasks=10), "parsl_release=2025.6.2", load_catalogs([str(cat)]))
    assert spec.packages == ["parsl==2025.6.2"] and spec.python is None
    assert spec.treatments == ["parsl_release=2025.6.2"]
    bad = tmp_path / "bad.toml"
    bad.write_text("[factor.x]\npackage = { parsl = [1] }\n")
    with pytest.raises(PerflabError, match="must be a version"):
        load_catalog(bad)


def test_interpreters_present_become_factors(tmp_path: Path, monkeypatch) -> None:
    for version in ("3.10.13", "3.12.0", "3.12.1", "3.13.0"):
        minor = version.rsplit(".", 1)[0]
        exe = tmp_path / "versions" / version / "bin" / f"python{minor}"
        exe.parent.mkdir(parents=True)
        exe.write_text("#!/bin/sh\n")
        exe.chmod(0o755)
    monkeypatch.setattr(interpreter, "SEARCH", (str(tmp_path / "versions/*/bin/python3.*"),))
    found = interpreter.discovered_interpreters()
    assert list(found) == ["3.12", "3.13"]  # 3.10 is too old for perflab; newest patch wins
    assert "3.12.1" in found["3.12"]
    tables = interpreter.interpreter_factors()
    assert tables["python3.12"]["python"] == {"path": found["3.12"], "venv": True}
    assert tables["python3.12"]["conflicts"] == ["python3.13"]


def test_builtin_catalog_lists_the_interpreters_of_this_machine() -> None:
    cat = load_catalogs()
    for version, path in interpreter.discovered_interpreters().items():
        spec = treat(RunSpec(tasks=10), f"python{version}", cat)
        assert spec.venv_base == path and spec.python is None


@pytest.mark.slow
def test_private_venv_is_built_once_reused_and_a_bad_version_leaves_nothing(
    tmp_path: Path,
) -> None:
    root = tmp_path / "venvs"
    venv = ensure_venv(None, ["six==1.16.0"], root)
    assert venv.installed["six"] == "1.16.0" and "psutil" in venv.installed
    marker = venv.path / MARKER
    stamp = marker.stat().st_mtime_ns
    again = ensure_venv(sys.executable, ["six==1.16.0"], root)
    assert again.path == venv.path and marker.stat().st_mtime_ns == stamp  # cached
    with pytest.raises(PerflabError, match=r"pip install six==0\.0\.0\.1.*failed"):
        ensure_venv(None, ["six==0.0.0.1"], root)
    assert sorted(p.name for p in root.iterdir() if not p.name.startswith(".")) == [venv.path.name]
    # a black-box command finds the venv's python first on PATH, and the record says so
    rec = measure(
        RunSpec(
            metric="us_per_task",
            command="python -c 'import six; print(int(six.__version__.split(\".\")[1]))'",
            packages=["six==1.16.0"],
            run_root=str(tmp_path / "runs"),
        )
    )
    assert rec.status == "ok", rec.error
    assert rec.us_per_task == 16.0
    assert rec.env["venv"]["requirements"] == ["six==1.16.0"]


@pytest.mark.slow
def test_compare_on_htex_runs_both_sides_interleaved(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "PERFLAB_HOME": str(tmp_path)}
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "perflab",
            "compare",
            "--treat-b",
            "cfg_noop_logging",
            # one worker, no warm-up, few tasks: what is tested is that both sides run on
            # HTEX interleaved, not HTEX's rate, and each run starts an HTEX of its own
            "--tasks",
            "50",
            "--warmup",
            "0",
            "--workers",
            "1",
            "--runs",
            "2",
            "--fixed",
            "--json",
        ],
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
        cwd=tmp_path,
    )
    assert proc.returncode in (0, 1), proc.stderr
    out = json.loads(proc.stdout)
    assert out["a"]["n"] == out["b"]["n"] == 2
    assert out["b"]["treatments"] == ["cfg_noop_logging"] and out["a"]["treatments"] == []
    assert out["verdict"] in ("faster", "slower", "no difference", "inconclusive")
    assert out["regression"] == (proc.returncode == 1)
