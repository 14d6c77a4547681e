"""``interpreter``: run the measurement under another Python.

    python = "/path/to/python"                          # or a venv directory: used as it is
    python = { path = "/opt/py3.13/bin/python", venv = true }

With ``venv = true`` the run gets a private venv of that interpreter (built once, cached)
holding the target's packages at the versions installed here, so only the interpreter differs.
The built-in catalog has such a factor, ``python3.X``, for each CPython ≥ 3.11 found under
pyenv or in /usr/bin (``discovered_interpreters``), and ``python3.Xt`` for a free-threaded
build. A free-threaded build's factor takes the GIL as its level (``python3.13t=0`` runs with
``PYTHON_GIL=0``, ``=1`` with the GIL back on); a build configured with the experimental JIT
takes the JIT as its level (``PYTHON_JIT=0|1``). What a build is comes from its own
sysconfig data, read as text: the catalog loads often, so no interpreter is started for it.
Interpreters perflab built itself are the factors ``py``, ``py_gil``, ``py_jit`` and
``py_pgo``, whose levels compose (kinds/pybuild.py).
"""

from __future__ import annotations

import glob
import os
import re
from dataclasses import replace
from pathlib import Path
from typing import Any

from perflab.errors import PerflabError
from perflab.factors.kinds import FACTOR_KINDS
from perflab.factors.kinds.base import FactorKind
from perflab.spec import RunSpec

#: perflab itself runs inside the measured interpreter, so it must be new enough for perflab.
MIN_VERSION = (3, 11)
SEARCH = ("~/.pyenv/versions/*/bin/python3.*", "/usr/bin/python3.*", "/usr/local/bin/python3.*")
VERSION_RE = re.compile(r"(?:^|/)(?:python)?(\d+)\.(\d+)(?:\.(\d+))?t?(?:/|$)")
#: ``python3.13`` or ``python3.13t`` (free-threaded); ``python3.13-config`` and the like are not.
NAME_RE = re.compile(r"python(\d+)\.(\d+)(t?)")


def resolve_python(path: str) -> str:
    """The interpreter ``path`` names: itself, or a venv folder's ``bin/python``."""
    if os.path.isdir(path):
        path = os.path.join(path, "bin", "python")
    return path


def use_interpreter(spec: RunSpec, path: str, venv: bool, named: str | None = None) -> RunSpec:
    """``spec`` run by the interpreter at ``path`` (a venv folder stands for its
    ``bin/python``): in a private venv of it with the target's packages (``venv``), else as
    it is. One that cannot be executed is refused, naming ``named`` (default ``path``).
    Every interpreter factor (``python``, and the built variants of ``py``, ``py_gil`` …)
    resolves its interpreter here."""
    python = resolve_python(path)
    if not os.access(python, os.X_OK):
        raise PerflabError(f"interpreter {named or path!r}: {python} is not an executable")
    return replace(spec, venv_base=python) if venv else replace(spec, python=python)


@FACTOR_KINDS.register
class InterpreterKind(FactorKind):
    name = "interpreter"
    keys = ("python",)
    #: A command's ``python`` is the variant's (its venv's bin first on PATH), the venv also
    #: holding the program's own packages (prepare/program.py); each Python process of the
    #: command proves which interpreter ran it (hook/seen.py).
    for_commands = True

    def parse(self, factor: str, key: str, value: Any, where: str, base_dir: Path) -> Any:
        if isinstance(value, dict):
            if not isinstance(value.get("path"), str) or set(value) - {"path", "venv"}:
                raise PerflabError(f"{where}: `python` table takes `path` and `venv` only")
            if not isinstance(value.get("venv", False), bool):
                raise PerflabError(f"{where}: `python.venv` must be true or false")
            return {"path": os.path.expanduser(value["path"]), "venv": value.get("venv", False)}
        if not isinstance(value, str) or not value:
            raise PerflabError(f"{where}: `python` must be a path to a Python or a venv")
        return {"path": os.path.expanduser(value), "venv": False}

    def apply(self, spec: RunSpec, key: str, value: Any) -> RunSpec:
        return use_interpreter(spec, value["path"], value["venv"])


def discovered_interpreters() -> dict[str, str]:
    """``{"3.12": path, "3.13t": path}``: one CPython per minor version ≥ 3.11 and build
    (``t``: free-threaded) found on this machine (the newest patch release under pyenv first,
    then system ones)."""
    found: dict[str, tuple[tuple[int, ...], str]] = {}
    for pattern in SEARCH:
        for path in glob.glob(os.path.expanduser(pattern)):
            name = os.path.basename(path)
            m = NAME_RE.fullmatch(name)
            if not m or not os.access(path, os.X_OK):
                continue
            minor = (int(m.group(1)), int(m.group(2)))
            if minor < MIN_VERSION:
                continue
            v = VERSION_RE.search(path.replace(name, ""))
            patch = tuple(int(x) for x in v.groups() if x) if v else minor
            key = f"{minor[0]}.{minor[1]}{m.group(3)}"
            if key not in found or patch > found[key][0]:
                found[key] = (patch, path)
    return {k: p for k, (_, p) in sorted(found.items())}


def build_flags(path: str, version: str) -> dict[str, bool]:
    """``free_threaded`` and ``jit`` of the interpreter at ``path`` (``version`` as in
    ``discovered_interpreters``), from its sysconfig data when it can be found beside it
    (``<prefix>/lib/python3.X[t]/_sysconfigdata_*.py``), else from its name."""
    prefix = Path(path).resolve().parent.parent
    text = ""
    for f in sorted(glob.glob(str(prefix / "lib" / f"python{version}" / "_sysconfigdata_*.py"))):
        try:
            text += Path(f).read_text(errors="replace")
        except OSError:
            continue
    free = version.endswith("t") or bool(re.search(r"'Py_GIL_DISABLED':\s*1\b", text))
    # --enable-experimental-jit, =yes or =yes-off (built in, off until PYTHON_JIT=1); not
    # =no, and not =interpreter (the tier-2 interpreter without machine code)
    jit = bool(re.search(r"--enable-experimental-jit(?:=yes(?:-off)?)?(?=[\s'\"]|$)", text))
    return {"free_threaded": free, "jit": jit}


def interpreter_factors() -> dict[str, dict[str, Any]]:
    """Catalog tables for the interpreters present: ``python3.12``, ``python3.13t`` … (they
    conflict). A free-threaded build's level is ``PYTHON_GIL``, a JIT build's ``PYTHON_JIT``."""
    found = discovered_interpreters()
    names = {v: f"python{v}" for v in found}
    out: dict[str, dict[str, Any]] = {}
    for v, path in found.items():
        flags = build_flags(path, v)
        build = "free-threaded " if flags["free_threaded"] else ""
        build += "JIT " if flags["jit"] else ""
        table: dict[str, Any] = {
            "description": f"CPython {v} {build}({path}) in a private venv with this "
            "environment's target packages",
            "category": "environment",
            "python": {"path": path, "venv": True},
            "conflicts": [n for w, n in names.items() if w != v],
        }
        # one switch per factor: a build both free-threaded and JIT gets the GIL as its
        # level (the JIT stays at the build's default)
        toggle = "PYTHON_GIL" if flags["free_threaded"] else "PYTHON_JIT" if flags["jit"] else None
        if toggle:
            table["levels"] = [0, 1]
            table["env"] = {toggle: "{level}"}
            table["description"] += f"; level: {toggle}=0|1"
        out[names[v]] = table
    return out
