"""The two sides of a comparison: one side's run with its treatments, interpreter, packages,
source tree or patch."""

from __future__ import annotations

import os
from pathlib import Path

from perflab.errors import PerflabError
from perflab.factors.catalog import load_catalogs
from perflab.factors.kinds.interpreter import discovered_interpreters, resolve_python
from perflab.factors.patching import check_patch, diff_targets
from perflab.factors.treat import treat
from perflab.factors.venvs import check_requirement, requirement_name
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
        _set_python(spec, python)
    for req in packages:
        _add_requirement(spec, check_requirement(req))
    if source:
        _add_requirement(spec, check_requirement(os.path.abspath(source)))
    if patch:
        _add_patch(spec, Path(patch))
    return spec


def _set_python(spec: RunSpec, python: str) -> None:
    """``3.12`` -> the interpreter present for that version, in a private venv; a path to a
    venv's python (or a venv directory) -> used as it is; another path -> a private venv."""
    found = discovered_interpreters()
    if python in found:
        spec.venv_base = found[python]
        spec.treatments = sorted([*spec.treatments, f"python{python}"])
        return
    if os.sep not in python:
        raise PerflabError(
            f"--python {python!r}: no such interpreter here (present: "
            f"{', '.join(found) or 'none'}; or give a path)"
        )
    path = resolve_python(python)
    if not os.access(path, os.X_OK):
        raise PerflabError(f"--python {python!r}: {path} is not an executable")
    if (Path(path).parent.parent / "pyvenv.cfg").is_file():
        spec.python = path
    else:
        spec.venv_base = path


def _add_requirement(spec: RunSpec, req: str) -> None:
    spec.packages = [r for r in spec.packages if requirement_name(r) != requirement_name(req)]
    spec.packages.append(req)


def _add_patch(spec: RunSpec, diff: Path) -> None:
    if not diff.is_file():
        raise PerflabError(f"--patch {diff}: no such file")
    targets = diff_targets(diff)
    if not targets:
        raise PerflabError(f"--patch {diff}: not a unified diff with b/ paths")
    package = targets[0].split("/", 1)[0]
    check_patch(package, diff.resolve(), None, f"--patch {diff}")
    spec.patches.append({"package": package, "diff": str(diff.resolve()), "factor": diff.name})
    spec.treatments = sorted([*spec.treatments, f"patch:{diff.name}"])
