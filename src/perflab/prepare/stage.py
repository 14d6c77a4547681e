"""``prepare(spec)``: everything a spec needs on this machine before it can run, made (or
found in perflab's caches) once, in one place, for every caller."""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

from perflab.files import home_dir
from perflab.prepare.environment import additions, child_env
from perflab.prepare.patched import PatchError, patched_tree
from perflab.prepare.program import program_packages
from perflab.prepare.transformed import transformed_sources
from perflab.prepare.venvs import VariantError, in_venv
from perflab.spec import RunSpec


@dataclass(frozen=True)
class Prepared:
    """A spec made ready to run, and what was made for it (for the run's record)."""

    #: The spec as it will run: in its private venv (``python``), requirements checked.
    spec: RunSpec
    #: The interpreter that runs an engine target (and is first on a command's PATH).
    python: str
    #: Trees put first on PYTHONPATH: the transformed copies, then the patched one.
    trees: tuple[Path, ...] = ()
    #: Per transformed package: its tree, package, version, diff and what each factor changed.
    transformed: tuple[dict[str, Any], ...] = ()
    patched: Path | None = None
    #: The record's ``env.venv`` (interpreter and requirements) when the run has a venv.
    venv: dict[str, Any] | None = None
    #: Entries first on PYTHONPATH and on PATH, and the variables set, for every run.
    pythonpath: tuple[str, ...] = ()
    path: tuple[str, ...] = ()
    env: MappingProxyType[str, str] = field(default_factory=lambda: MappingProxyType({}))
    #: Why the run cannot go ahead by its own fault (a patch that does not apply): the run is
    #: recorded as failed with this message.
    failed: str | None = None
    #: Why a tree could not be written by the machine's fault (disk full, no permission): the
    #: run is recorded as an infrastructure failure (a campaign retries it).
    unmade: str | None = None

    def run_env(self, run_dir: Path, base: dict[str, str] | None = None) -> dict[str, str]:
        """The measured tree's environment for the run in ``run_dir`` (``base``: default the
        caller's own)."""
        return child_env(self.pythonpath, self.path, self.env, run_dir, base)


def prepare(spec: RunSpec) -> Prepared:
    """``spec`` made ready to run: its private venv (package versions, another interpreter),
    then the transformed copies of the source that venv imports, then the patched copy; each
    built once and cached under perflab's home. A spec that asks for none is unchanged.

    Bad input (a version pip cannot install, a transform that matches nothing) raises
    PerflabError before anything runs; a patch that does not apply is ``failed``.
    """
    program = None
    if spec.command is not None and spec.venv_base is not None:
        # another interpreter for a command: its venv also needs the program's packages
        cwd, own = spec.cwd or os.getcwd(), spec.python or sys.executable
        program = program_packages(spec.command, cwd, own, home_dir("venvs"))
    if spec.packages or spec.venv_base is not None:  # a plain spec touches no cache
        try:
            spec = in_venv(spec, home_dir("venvs"), program["packages"] if program else None)
        except VariantError as exc:
            asked = {"python": spec.venv_base, "requirements": list(spec.packages),
                     "program": program}  # fmt: skip
            return Prepared(spec=spec, python=sys.executable, venv=asked, failed=str(exc))
    python = spec.python or sys.executable
    # after the venv: a transform meets the source the run's interpreter imports
    transformed = (
        transformed_sources(spec, home_dir("transformed"))
        if spec.transforms or spec.sources
        else []
    )
    patched = failed = unmade = None
    if spec.patches:
        try:
            patched = patched_tree(spec.patches, home_dir("patched"))
        except PatchError as exc:
            failed = str(exc)
        except OSError as exc:
            unmade = str(exc)
    trees = tuple(Path(s["tree"]) for s in transformed) + ((patched,) if patched else ())
    pythonpath, path, env = additions(spec, python, trees)
    venv: dict[str, Any] | None = None
    if spec.packages or spec.venv_base:
        venv = {"python": spec.python, "requirements": list(spec.packages)}
        if program is not None:  # what was installed into the variant for the program
            venv["program"] = program
    return Prepared(
        spec=spec,
        python=python,
        trees=trees,
        transformed=tuple(transformed),
        patched=patched,
        venv=venv,
        pythonpath=pythonpath,
        path=path,
        env=MappingProxyType(env),
        failed=failed,
        unmade=unmade,
    )
