"""On a free-threaded variant perflab built, an extension module without ``Py_mod_gil``
turns the GIL back on when imported: the run fails with that cause instead of measuring
the GIL build under a no-GIL label. The suite builds no CPython: without a free-threaded
variant in the cache (``perflab interpreters build --version 3.13 --from-debian --no-gil``;
``$PERFLAB_INTERPRETERS`` or perflab's home) this skips, saying so."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from perflab import measure
from perflab.factors.catalog import load_catalogs
from perflab.factors.kinds.pybuild import built_variants
from perflab.factors.treat import treat
from perflab.spec import RunSpec

#: A module of the old single-phase kind, which cannot declare ``Py_mod_gil``.
EXTENSION = """\
#include <Python.h>
static struct PyModuleDef def = {PyModuleDef_HEAD_INIT, "noglil", NULL, -1, NULL};
PyMODINIT_FUNC PyInit_noglil(void) { return PyModule_Create(&def); }
"""


def free_threaded() -> dict[str, Any] | None:
    found = [v for v in built_variants() if v.get("flags") == ["nogil"] and v.get("python")]
    return found[0] if found else None


pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        free_threaded() is None,
        reason="no free-threaded CPython built here (perflab interpreters build --version 3.13 "
        "--from-debian --no-gil); the suite does not build CPython",
    ),
    pytest.mark.skipif(shutil.which("cc") is None, reason="needs a C compiler for the extension"),
]


@pytest.fixture(scope="module")
def work(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder holding the extension, compiled for the free-threaded variant."""
    variant = free_threaded()
    assert variant is not None
    work = tmp_path_factory.mktemp("gil")
    (work / "noglil.c").write_text(EXTENSION)
    ask = "import sysconfig, json; print(json.dumps([sysconfig.get_path('include'), " \
          "sysconfig.get_config_var('EXT_SUFFIX')]))"  # fmt: skip
    out = subprocess.run([variant["python"], "-c", ask], capture_output=True, text=True, check=True)
    include, suffix = json.loads(out.stdout)
    subprocess.run(["cc", "-shared", "-fPIC", f"-I{include}", "-o", str(work / f"noglil{suffix}"),
                    str(work / "noglil.c")], check=True)  # fmt: skip
    return work


@pytest.fixture
def home(work: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PERFLAB_HOME", str(work / "home"))  # the variant's venv: built once


def run(work: Path, code: str) -> Any:
    spec = RunSpec(command=f"python -c '{code}'", cwd=str(work), run_root=str(work / "runs"),
                   metric="wall_s", timeout_s=600)  # fmt: skip
    return measure(treat(spec, "py_gil=off", load_catalogs()))


def test_without_the_extension_every_process_is_proven_free_threaded(
    work: Path, home: None
) -> None:
    rec = run(work, "import sys; assert not sys._is_gil_enabled()")
    assert rec.status == "ok", rec.error
    [proof] = rec.measurement["treated"]["py_gil=off"]
    assert proof["gil"] is False


def test_an_extension_turning_the_gil_back_on_fails_the_run(work: Path, home: None) -> None:
    rec = run(work, "import noglil, sys; print(sys._is_gil_enabled())")
    assert rec.status != "ok"
    assert "turned the GIL back on" in (rec.error or "") and "noglil" in (rec.error or "")
