"""Treatments that reach a user's own program: perflab's side of the hook (``hook/site.py``
is the side that runs inside the program's Python processes).

* :func:`config_ops` turns a ``config`` factor's effects (the options the Parsl engines take,
  ``engines/parsl_htex.py``) into what the hook does to the objects the program builds.
* :func:`arm` puts the hook into a command's run: ``hook/`` (its ``sitecustomize.py``),
  ``proof/`` and ``treat.json`` in the 0700 run directory, the hook first on ``PYTHONPATH``.
* :func:`read_facts` and :func:`judge` read what the hook wrote and say, per treated factor,
  where it took effect, or why it took effect nowhere (which fails the run).

docs/user-programs.md describes the whole (proof format, security model, limits).
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

from perflab.files import create_private
from perflab.hook.dask_proof import judge_resolved
from perflab.hook.seen import (
    NOT_IMPORTED,
    is_seen,
    judge_seen,
    module_of,
    release_modules,
    release_proof,
)
from perflab.spec import RunSpec

HOOK_DIR = "hook"
PROOF_DIR = "proof"
TREAT_FILE = "treat.json"
#: The most facts of one kind kept in a record per factor (a pool per block, a worker each).
MAX_FACTS = 8
#: Bytes of proof read per process file (a runaway program cannot fill the record).
MAX_PROOF_BYTES = 1 << 20

HTEX = "HighThroughputExecutor"
DASK_CONFIG = "dask.config"
LOCAL_CLUSTER = "LocalCluster"
#: The task system a hook operation's object belongs to: (the package, its name).
SYSTEMS = {DASK_CONFIG: ("distributed", "Dask distributed"), LOCAL_CLUSTER: ("distributed",
           "Dask distributed")}  # fmt: skip
#: What the hook passes (or sets) for each Parsl engine option a config factor treats. The
#: option names are the engines' own (``HTEX_OPTIONS`` and the engine's ``workers``,
#: ``blocks``, ``initialize_logging``), so a catalog factor means the same for a command.
NOT_FOR_COMMANDS = {
    "encrypted": "turning HTEX's encryption off is refused for a program perflab does not own",
    "affinity": "role pinning needs perflab's own HTEX launch commands",
}


def config_unreachable(options: dict[str, Any]) -> str | None:
    """Why a config factor's options cannot reach a program (None: the hook applies them)."""
    from perflab.engines.dask_local import DASK_KNOBS
    from perflab.engines.parsl_htex import HTEX_OPTIONS
    from perflab.net import NET_OPTIONS

    for key in options:
        if key in DASK_KNOBS:
            continue
        if key in NOT_FOR_COMMANDS:
            return NOT_FOR_COMMANDS[key]
        if key in NET_OPTIONS:
            return f"{key} needs perflab's own relay between the pools and the interchange"
        if key not in (*HTEX_OPTIONS, "workers", "blocks", "initialize_logging"):
            return f"option {key!r} has no meaning outside perflab's engines"
    return None


def config_ops(options: dict[str, Any]) -> tuple[list[dict[str, Any]], str | None]:
    """The hook's operations for a config factor's options (level substituted), or why one
    cannot reach a program (an option only perflab's engines understand)."""
    from perflab.engines.dask_local import DASK_KNOBS, dask_settings
    from perflab.engines.parsl_htex import HTEX_OPTIONS

    why = config_unreachable(options)
    if why:
        return [], why
    config, cluster = dask_settings({k: v for k, v in options.items() if k in DASK_KNOBS})
    ops: list[dict[str, Any]] = [
        *({"on": DASK_CONFIG, "key": k, "value": v} for k, v in config.items()),
        *({"on": LOCAL_CLUSTER, "arg": k, "value": v} for k, v in cluster.items()),
    ]
    for key, value in options.items():
        if key in DASK_KNOBS:
            continue
        if key in HTEX_OPTIONS:
            ops.append({"on": HTEX, "arg": key, "value": value})
        elif key == "workers":
            ops.append({"on": HTEX, "arg": "max_workers_per_node", "value": int(value)})
        elif key == "blocks":
            ops += [
                {"on": HTEX, "attr": f"provider.{a}", "value": int(value)}
                for a in ("init_blocks", "min_blocks", "max_blocks")
            ]
        elif key == "initialize_logging":
            v = {"class": "parsl.logconfigs.noop.NoopLogging"} if value == "noop" else value
            ops.append({"on": "Config", "arg": "initialize_logging", "value": v})
    return ops, None


#: The hook's files, as copied into the run: name in the run's hook folder -> source here.
HOOK_FILES = {
    "sitecustomize.py": "site.py",
    "perflab_hook_parsl.py": "parsl_hook.py",
    "perflab_hook_dask.py": "dask_hook.py",
}


def arm(env: dict[str, str], spec: RunSpec, run_dir: Path) -> None:
    """Put the hook into a command's run: its files in the (0700) run directory, and its
    folder first on the command's ``PYTHONPATH`` (``env`` is changed in place). The
    treatment file holds the config factors' operations and the modules whose import the
    hook reports (the transformed packages', and those a package factor's or the run's own
    release installs: proof that the treated copy, or the release, is the one imported)."""
    hook = run_dir / HOOK_DIR
    hook.mkdir(mode=0o700)
    (run_dir / PROOF_DIR).mkdir(mode=0o700)
    for name, source in HOOK_FILES.items():
        create_private(hook / name, (Path(__file__).parent / source).read_text())
    packages = sorted(
        {t["package"] for t in spec.transforms}
        | {
            m
            for op in [*(op for ops in spec.hook.values() for op in ops), *release_ops(spec)]
            if op.get("on") == "package"
            for m in release_modules(op["package"], spec.python)
        }
    )
    treatment = {"version": 1, "factors": spec.hook, "packages": packages}
    create_private(run_dir / TREAT_FILE, json.dumps(treatment))
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(hook), env.get("PYTHONPATH")) if p)
    env["PERFLAB_HOOK"] = "1"


def release_ops(spec: RunSpec) -> list[dict[str, Any]]:
    """The releases the run itself asks for (``name==version`` of its private venv: a
    compare side's ``--package``, explain's release B), each proven like a package factor's."""
    ops = []
    for req in spec.packages:
        name, sep, version = req.partition("==")
        if sep and os.sep not in req:
            name = name.split("[")[0].strip()
            ops.append({"on": "package", "package": name, "module": module_of(name),
                        "version": version.strip()})  # fmt: skip
    return ops


def judge_releases(
    spec: RunSpec, facts: list[dict[str, Any]]
) -> tuple[dict[str, list[dict[str, Any]]], list[str]]:
    """Per release the run asks for, each process's import of it (the file and the version
    beside it; an empty list: no process imported it), and the causes of another release
    imported (each fails the run: it measured the wrong release)."""
    proofs: dict[str, list[dict[str, Any]]] = {}
    causes: list[str] = []
    for op in release_ops(spec):
        where, why = release_proof(op, facts, spec.python)
        name = f"{op['package']}=={op['version']}"
        if why and why.startswith(NOT_IMPORTED):
            proofs[name] = []
        elif why:
            causes.append(f"{name}: {why}")
        else:
            proofs[name] = where
    return proofs, causes


def read_facts(run_dir: Path) -> list[dict[str, Any]]:
    """Every fact the hook wrote in the run (the run directory is perflab's own, 0700)."""
    folder = run_dir / PROOF_DIR
    facts: list[dict[str, Any]] = []
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return facts
    for name in names:
        try:
            fd = os.open(folder / name, os.O_RDONLY | os.O_NOFOLLOW)
        except OSError:
            continue
        with os.fdopen(fd, "rb") as f:
            if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
                continue
            data = f.read(MAX_PROOF_BYTES)
        for line in data.decode(errors="replace").splitlines():
            try:
                fact = json.loads(line)
            except ValueError:
                continue
            if isinstance(fact, dict):
                facts.append(fact)
    return facts


def _process(fact: dict[str, Any]) -> dict[str, Any]:
    return {"pid": fact.get("pid"), "argv0": fact.get("argv0")}


def judge(
    factors: dict[str, list[dict[str, Any]]],
    transforms: list[dict[str, Any]],
    facts: list[dict[str, Any]],
    run_dir: Path | None = None,
    python: str | None = None,
) -> tuple[dict[str, Any], list[str]]:
    """Per treated factor, where it took effect (``treated``), and the causes of those that
    took effect nowhere (each fails the run). ``run_dir`` is the run's directory (a
    ``rundir`` factor's proof is where it lies), ``python`` its interpreter (a package
    factor's modules are those its venv's distribution installs)."""
    treated: dict[str, Any] = {}
    causes: list[str] = []
    refused = [f for f in facts if f.get("fact") == "refused"]
    for f in refused:
        causes.append(f"the hook refused the treatment file in {f.get('argv0')}: {f.get('why')}")
    for factor, all_ops in sorted(factors.items()):
        ops = [op for op in all_ops if not is_seen(op)]
        seen = [op for op in all_ops if is_seen(op)]
        where, whys = judge_seen(factor, seen, facts, run_dir, python)
        if ops:
            got = _config_evidence(factor, ops, facts)
            where += got
            whys += [] if got else [f"{factor}: {_config_absent(factor, ops, facts)}"]
            # a key the hook set must still be the one Dask resolved (the program may set it)
            back, wrong = judge_resolved([o for o in ops if o["on"] == DASK_CONFIG], facts, False)
            where, whys = where + back, whys + [f"{factor}: {w}" for w in wrong]
        if whys or not where:
            causes += whys or [f"{factor}: the hook has nothing to apply"]
        else:
            treated[factor] = where
    by_factor: dict[str, set[str]] = {}
    for t in transforms:
        by_factor.setdefault(t["factor"], set()).add(t["package"])
    for factor, packages in sorted(by_factor.items()):
        where, why = _transform_evidence(factor, packages, facts)
        if why:
            causes.append(f"{factor}: {why}")
        else:
            treated[factor] = where
    return treated, causes


def _config_evidence(
    factor: str, ops: list[dict[str, Any]], facts: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for f in facts:
        if f.get("fact") == "set" and f.get("factor") == factor:
            out.append({
                "process": _process(f), "object": f.get("object"), "option": f.get("option"),
                "old": f.get("old"), "new": f.get("new"),
                **({"overrode_program": True} if f.get("overrode_program") else {}),
            })  # fmt: skip
    if not out:
        return out
    out = out[:MAX_FACTS]
    # what the components Parsl started saw: each pool's own command line, each log start
    wanted = {op["arg"]: op["value"] for op in ops if op.get("arg")}
    pool_keys = {"prefetch_capacity", "poll_period", "max_workers_per_node"}
    seen: list[dict[str, Any]] = []
    for f in facts:
        if f.get("fact") == "pool":
            got = {k: f["options"].get(k) for k in pool_keys & set(wanted)}
            if "worker_debug" in wanted:
                got["debug"] = f["options"].get("debug")
            if got:
                seen.append({"process": _process(f), "object": "worker pool", "started_with": got})
        elif f.get("fact") == "logging" and "initialize_logging" in wanted:
            seen.append({
                "process": _process(f), "object": f"{f.get('component')} logging",
                "started_with": f.get("log_config"),
            })  # fmt: skip
    out += seen[:MAX_FACTS]
    return out


def _config_absent(factor: str, ops: list[dict[str, Any]], facts: list[dict[str, Any]]) -> str:
    errors = [f for f in facts if f.get("fact") == "error" and f.get("factor") == factor]
    if errors:
        return f"the hook could not apply it: {errors[0].get('error')}"
    on = sorted({op["on"] for op in ops})
    package, name = SYSTEMS.get(on[0], ("parsl", "Parsl"))
    if not any(f.get("fact") == "import" and f.get("package") == package for f in facts):
        return f"no Python process of the command imported {name}"
    made = [f for f in facts if f.get("fact") == "created" and f.get("class") in on]
    if not made:
        configs = [f for f in facts if f.get("fact") == "created" and f.get("class") == "Config"]
        used = sorted({e for c in configs for e in c.get("executors", [])})
        also = f" (its Config's executors: {', '.join(used)})" if used else ""
        return f"the command created no {' or '.join(on)}{also}"
    return f"the command's {on[0]} took no option it treats"


def _transform_evidence(
    factor: str, packages: set[str], facts: list[dict[str, Any]]
) -> tuple[list[dict[str, Any]], str | None]:
    imports = [f for f in facts if f.get("fact") == "import" and f.get("package") in packages]
    if not imports:
        return [], f"no Python process of the command imported {', '.join(sorted(packages))}"
    where: list[dict[str, Any]] = []
    wrong: list[dict[str, Any]] = []
    for f in imports:
        tree = _treated_tree(str(f.get("file") or ""), factor)
        (where if tree else wrong).append(f)
    if wrong:
        f = wrong[0]
        return [], (
            f"{f.get('argv0')} (pid {f.get('pid')}) imported {f.get('package')} from "
            f"{f.get('file')}, not the treated copy"
        )
    return [
        {"process": _process(f), "imported": f.get("file"), "script": f.get("script")}
        for f in where[:MAX_FACTS]
    ], None


def _treated_tree(file: str, factor: str) -> Path | None:
    """The transformed tree holding ``file`` whose report names ``factor``, or None."""
    if not file:
        return None
    for parent in Path(file).parents:
        meta = parent / "transform.json"
        if meta.is_file():
            try:
                report = json.loads(meta.read_text())["factors"]
            except (OSError, ValueError, KeyError):
                return None
            return parent if any(r.get("factor") == factor for r in report) else None
    return None


COUNTED_AT = {
    "parsl": "perflab hook (DataFlowKernel.submit and each AppFuture's result)",
    "dask": "perflab hook (Client.submit and Client.map, and each future's result)",
    "dask scheduler": "perflab hook (the program's own Scheduler: each graph's tasks, from "
    "submit, map and dask.compute, and each one's end)",
}


def task_count(facts: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The program's tasks as the hook counted them (the process that submitted most)."""
    counts = [f for f in facts if f.get("fact") == "tasks" and f.get("submitted")]
    if not counts:
        return None
    best = max(
        counts,  # the scheduler's count covers the client's: it wins a tie
        key=lambda f: (f["submitted"], f.get("completed", 0), f.get("counted_at") == "scheduler"),
    )
    span = None
    if best.get("first_submit") is not None and best.get("last_result") is not None:
        span = float(best["last_result"]) - float(best["first_submit"])
    return {
        "source": COUNTED_AT.get(
            " ".join(str(x) for x in (best.get("system"), best.get("counted_at")) if x),
            "perflab hook",
        ),
        "system": best.get("system"),
        "process": _process(best),
        "submitted": best["submitted"],
        "completed": best.get("completed", 0),
        "failed": best.get("failed", 0),
        "span_s": span,
    }


def program_logs(facts: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The log files in the run directories the program's task system made (Parsl's
    ``runinfo/NNN``): how many, their bytes and lines (a logging factor's visible effect)."""
    dirs = sorted({str(f["path"]) for f in facts if f.get("fact") == "run_dir" and f.get("path")})
    if not dirs:
        return None
    files = bytes_ = lines = 0
    for d in dirs:
        for p in Path(d).rglob("*"):
            if p.is_file() and not p.is_symlink() and (p.suffix == ".log" or ".log." in p.name):
                try:
                    data = p.read_bytes()
                except OSError:
                    continue
                files, bytes_, lines = files + 1, bytes_ + len(data), lines + data.count(b"\n")
    return {"run_dirs": dirs, "files": files, "bytes": bytes_, "lines": lines}
