"""``perflab factors list --for-command``: a short probe run of a command finds which task
systems its Python processes import and what they build, and which built-in factors can
therefore reach it."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from perflab.factors.catalog import Catalog, Factor, is_builtin, kind_of
from perflab.hook import read_facts
from perflab.spec import RunSpec

#: Packages a probe reports when the command imports them.
TASK_SYSTEMS = ("parsl", "dask", "distributed")


def probe(command: str, timeout_s: float, run_root: str | None = None) -> dict[str, Any]:
    """Run ``command`` once under the hook (no treatment) and say what it used: the task
    systems imported (where from, which version) and the objects the hook saw it build."""
    from perflab.run.measure import measure

    spec = RunSpec(
        command=command, metric="wall_s", timeout_s=timeout_s, keep_run_dir=True,
        run_root=run_root,
    )  # fmt: skip
    record = measure(spec)
    run_dir = record.measurement.get("run_dir")
    facts = read_facts(Path(run_dir)) if run_dir else []
    if run_dir:
        shutil.rmtree(run_dir, ignore_errors=True)
    imported: dict[str, Any] = {}
    for f in facts:
        if f.get("fact") == "import" and f.get("package") in TASK_SYSTEMS:
            imported.setdefault(f["package"], {"version": f.get("version"), "file": f.get("file")})
    built = sorted({f["class"] for f in facts if f.get("fact") == "created"})
    executors = sorted(
        {e for f in facts if f.get("fact") == "created" for e in f.get("executors", [])}
    )
    return {
        "status": record.status,
        "error": record.error,
        "wall_s": record.wall_s,
        "imports": imported,
        "built": built,
        "executors": executors,
    }


def reaching(catalog: Catalog, found: dict[str, Any]) -> list[tuple[Factor, str]]:
    """The built-in factors that can reach the probed program, each with how."""
    from perflab.factors.treat import cannot_reach

    out = []
    for f in catalog.nice_order():
        if not is_builtin(f.source) or cannot_reach(f):
            continue
        how = _how(f, found)
        if how:
            out.append((f, how))
    return out


def _how(f: Factor, found: dict[str, Any]) -> str | None:
    kinds = {kind_of(k).name for k in f.effects}
    ways = []
    if "config" in kinds:
        on = {_config_on(v) for v in f.effects.get("config", {})}
        if not on <= {*found["built"], *found["executors"], *found["imports"]}:
            return None
        ways.append(f"hook: {', '.join(sorted(on))}")
    if "transform" in kinds:
        packages = {t["package"] for t in f.effects["transform"]}
        if not packages <= set(found["imports"]):
            return None
        ways.append(f"treated copy of {', '.join(sorted(packages))}")
    rest = kinds - {"config", "transform"}
    if rest:
        if f.targets != ["*"] and not set(found["imports"]) & {"parsl"}:
            return None  # a Parsl factor's environment for a program with no Parsl
        if "rundir" in f.effects:  # the hook moves a Parsl program's own run_dir there too
            ways.append("the run directory (and the program's Parsl run_dir)")
        else:
            ways.append(f"the command's {', '.join(sorted(rest))}")
    return "; ".join(ways) or None


def _config_on(option: str) -> str:
    """What a program must import or build for a config option to reach it."""
    from perflab.engines.dask_local import DASK_KNOBS

    if option in DASK_KNOBS:
        return "LocalCluster" if DASK_KNOBS[option][0] == "cluster" else "distributed"
    return "Config" if option == "initialize_logging" else "HighThroughputExecutor"
