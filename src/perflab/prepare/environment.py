"""The environment a measured process tree starts with: the caller's, with the run's trees
and perflab itself first on PYTHONPATH, the run's interpreter first on PATH, and the
treatments' variables set."""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from pathlib import Path

import perflab
from perflab.spec import RunSpec


def perflab_source() -> str:
    """The folder this perflab is imported from (another interpreter must import it too)."""
    return str(Path(perflab.__file__).resolve().parent.parent)


def additions(
    spec: RunSpec, python: str, trees: tuple[Path, ...]
) -> tuple[tuple[str, ...], tuple[str, ...], dict[str, str]]:
    """What a run adds to the caller's environment: the entries put first on PYTHONPATH and
    on PATH, and the variables set (before ``PERFLAB_RUN_DIR``, which the run dir names)."""
    # A treatment's PYTHONPATH (a start-up bundle) goes first; then the patched or
    # transformed copies, which must shadow the installed packages; perflab stays importable.
    own = spec.env.get("PYTHONPATH")
    pythonpath = ((own,) if own else ()) + tuple(map(str, trees)) + (perflab_source(),)
    # Task systems find their helper scripts (Parsl's interchange.py, process_worker_pool.py)
    # on PATH: the copies' and the measured interpreter's bin first, as an activated venv.
    path = (*(str(t / "bin") for t in trees), str(Path(python).parent))
    path += (str(Path(sys.executable).parent),)
    env = {"PERFLAB_TREATMENTS": ",".join(spec.treatments)}
    env.update({k: v for k, v in spec.env.items() if k != "PYTHONPATH"})
    return pythonpath, path, env


def prepend(env: dict[str, str], var: str, *dirs: str) -> None:
    """``dirs`` first on the search path ``var`` of ``env`` (each once)."""
    env[var] = os.pathsep.join(dict.fromkeys(p for p in (*dirs, env.get(var)) if p))


def child_env(
    pythonpath: tuple[str, ...],
    path: tuple[str, ...],
    variables: Mapping[str, str],
    run_dir: Path,
    base: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """``base`` (default: this process's environment) with a run's additions, for the run in
    ``run_dir``. A treatment's own variable wins over perflab's, even ``PATH``, as it did."""
    env = dict(os.environ if base is None else base)
    prepend(env, "PATH", *path)
    env["PERFLAB_RUN_DIR"] = str(run_dir)
    env.update(variables)
    prepend(env, "PYTHONPATH", *pythonpath)
    return env
