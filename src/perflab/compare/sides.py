"""The two sides of a comparison: one side's run with its treatments, interpreter, packages,
source tree or patch. Each option is the effect of a factor kind (``interpreter``,
``package``, ``patch``), applied by that kind as a catalog's factor would be."""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path
from typing import Any

from perflab.errors import PerflabError
from perflab.factors.catalog import load_catalogs
from perflab.factors.kinds import FACTOR_KINDS
from perflab.factors.kinds.interpreter import discovered_interpreters, resolve_python
from perflab.factors.patching import diff_targets
from perflab.factors.treat import treat
from perflab.spec import RunSpec


def side_spec(
    spec: RunSpec,
    treatments: str = "",
    catalogs: list[str] | None = None,
    python: str | None = None,
    packages: tuple[str, ...] = (),
    source: str | None = None,
    patch: str | None = None,
) -> RunSpec:
    """``spec`` (one side's run options) with that side's treatments, interpreter, package
    requirements, source tree and patch added; each checked, errors naming the option."""
    if treatments or catalogs:
        spec = treat(spec, treatments, load_catalogs(list(catalogs or ())))
    if python:
        spec = _python(spec, python)
    reqs = [*packages, *([os.path.abspath(source)] if source else [])]
    if reqs:
        spec = _effect(spec, "package", "package", reqs, "--package")
    if patch:
        spec = _patch(spec, Path(patch))
    return spec


def _effect(spec: RunSpec, kind: str, key: str, value: Any, where: str) -> RunSpec:
    """``spec`` with one effect put in by its kind, checked first as a catalog's would be."""
    k = FACTOR_KINDS.get(kind)
    k.check(value, where)
    return k.apply(spec, key, value)


def _python(spec: RunSpec, python: str) -> RunSpec:
    """``3.12`` -> the interpreter present for that version, in a private venv; a path to a
    venv's python (or a venv directory) -> used as it is; another path -> a private venv."""
    found = discovered_interpreters()
    if python in found:
        spec = _effect(
            spec, "interpreter", "python", {"path": found[python], "venv": True}, "--python"
        )
        return replace(spec, treatments=sorted([*spec.treatments, f"python{python}"]))
    if os.sep not in python:
        raise PerflabError(
            f"--python {python!r}: no such interpreter here (present: "
            f"{', '.join(found) or 'none'}; or give a path)"
        )
    path = resolve_python(python)
    if not os.access(path, os.X_OK):
        raise PerflabError(f"--python {python!r}: {path} is not an executable")
    is_venv = (Path(path).parent.parent / "pyvenv.cfg").is_file()
    return _effect(spec, "interpreter", "python", {"path": path, "venv": not is_venv}, "--python")


def _patch(spec: RunSpec, diff: Path) -> RunSpec:
    """The patch kind's effect for a diff of the installed package its paths name."""
    if not diff.is_file():
        raise PerflabError(f"--patch {diff}: no such file")
    targets = diff_targets(diff)
    if not targets:
        raise PerflabError(f"--patch {diff}: not a unified diff with b/ paths")
    package = targets[0].split("/", 1)[0]
    value = {"package": package, "diff": str(diff.resolve()), "factor": diff.name}
    spec = _effect(spec, "patch", "patch", value, f"--patch {diff}")
    return replace(spec, treatments=sorted([*spec.treatments, f"patch:{diff.name}"]))
