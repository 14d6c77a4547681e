"""Proof for the factors perflab applies around a command rather than to the objects its
program builds: ``env``, ``wrapper``, ``rundir``, ``startup``, ``package`` and
``interpreter`` (each Python process's real interpreter; an env factor's ``DASK_*``
variables are proven by the value Dask resolved, ``hook/dask_proof.py``).

:func:`seen_ops` turns such a factor's (level-substituted) effects into operations for the
treatment file. The hook applies none of them except a ``rundir`` factor's, which moves the
Parsl run directory the program chose (``Config.run_dir``) into the run directory; for the
rest every Python process of the command writes what it saw at start-up (the watched
variables of its environment, its nice value, scheduling policy and CPUs, the start-up file
that ran), and :func:`judge_seen` checks those against the operations. A command with no
Python process (a shell script, a compiled program) cannot run the hook: its env, wrapper and
rundir factors are then proven only by how perflab launched it, and the record says so. A
``package`` factor (another release in a private venv, first on the command's ``PATH``) is
proven by the release of the package each process imported (read beside the file it
imported; the modules watched are those the distribution installs, :func:`release_modules`),
so a command that runs another interpreter fails instead of measuring the wrong release.
"""

from __future__ import annotations

import functools
import os
import sys
from pathlib import Path
from typing import Any

from perflab.hook.dask_proof import dask_env_ops, judge_resolved
from perflab.hook.interp_proof import judge_variant

#: Operations the hook checks rather than applies (``"on"`` of an operation).
SEEN = ("env", "wrapper", "rundir", "startup", "package", "dask_env", "interpreter")
#: Where the program's own Parsl run directory goes under a ``rundir`` factor.
PROGRAM_DIR = "program"
MAX_FACTS = 8
#: How far above an imported file its release's ``*.dist-info`` is looked for.
MAX_DEPTH = 8
#: How a release's proof begins when no process imported it.
NOT_IMPORTED = "no Python process of the command imported"
LAUNCH = "perflab's launch (no Python process of the command ran the hook)"


def seen_ops(effects: dict[str, Any]) -> list[dict[str, Any]]:
    """The hook's operations proving a factor's env, wrapper, rundir, startup and package
    effects (``effects``: catalog key -> level-substituted value)."""
    ops: list[dict[str, Any]] = []
    for key, value in effects.items():
        if key == "env":
            ops += [{"on": "env", "var": str(k), "value": str(v)} for k, v in value.items()]
            ops += dask_env_ops(value)  # proven by what Dask resolved, not the variable only
        elif key == "wrapper":
            ops += [
                {"on": "wrapper", "setting": k, "value": value[k]}
                for k in ("nice", "policy", "cpus")
                if k in value
            ]
        elif key == "rundir":
            ops.append({"on": "rundir", "path": str(value)})
            # applied only where the program builds a Parsl Config (judged here, not as a
            # config factor: a program without Parsl still has its run directory moved)
            ops.append({"on": "Config", "arg": "run_dir", "value": {"in_run_dir": PROGRAM_DIR},
                        "if_built": True})  # fmt: skip
        elif key == "startup":
            ops.append({"on": "startup", "bundle": bool(value.get("bundle")),
                        "trim_path": bool(value.get("trim_path"))})  # fmt: skip
        elif key == "python" and isinstance(value, dict):
            path = str(value["path"])  # a venv directory stands for its bin/python
            path = os.path.join(path, "bin", "python") if os.path.isdir(path) else path
            ops.append({"on": "interpreter", "path": os.path.realpath(path),
                        "venv": bool(value.get("venv"))})  # fmt: skip
        elif key == "package" and isinstance(value, dict):
            ops += [
                {"on": "package", "package": str(k), "module": module_of(str(k)), "version": str(v)}
                for k, v in value.items()
            ]
    return ops


def module_of(distribution: str) -> str:
    """The module a distribution's name stands for (``radical.saga``, ``dask-jobqueue`` ->
    ``dask_jobqueue``): the guess when the distribution's own files do not say
    (:func:`release_modules`)."""
    return distribution.replace("-", "_").lower()


def site_dirs(python: str | None) -> tuple[str, ...] | None:
    """The site-packages of the venv ``python`` belongs to (a release's private venv); None
    for an interpreter that is not a venv's (the distribution is looked up here)."""
    if not python:
        return None
    root = Path(python).parent.parent
    if not (root / "pyvenv.cfg").is_file():
        return None
    return tuple(sorted(str(p) for p in root.glob("lib/python3*/site-packages")))


@functools.lru_cache(maxsize=64)
def release_modules(distribution: str, python: str | None = None) -> tuple[str, ...]:
    """The top-level modules ``distribution`` installs where ``python`` imports from (its
    venv, else this environment): its ``top_level.txt``, else the first part of each path in
    its ``RECORD``. A distribution's name need not be its module's (PyYAML installs
    ``yaml``, pyzmq ``zmq``, scikit-learn ``sklearn``); private ones (``_yaml``) are left
    out when it has a public one. The name's own guess where it is one of them, or below one
    (``radical.saga`` in the namespace ``radical``), or when the distribution is not found."""
    from importlib import metadata

    paths = site_dirs(python)
    found = list(metadata.distributions(name=distribution, path=list(paths or sys.path)))
    names: list[str] = []
    if found:
        dist = found[0]
        top = dist.read_text("top_level.txt")
        if top:
            names = top.split()
        else:
            for f in dist.files or []:
                first = f.parts[0] if f.parts else ""
                name = first.removesuffix(".py") if len(f.parts) == 1 else first
                if len(f.parts) == 1 and "." in name:  # an extension module: zmq.cpython-311.so
                    name = name.split(".")[0] if first.endswith((".so", ".pyd")) else ""
                names.append(name)
    guess = module_of(distribution)
    names = sorted({n for n in names if n.isidentifier()})
    for g in (guess, guess.replace("_", ".")):  # radical.saga, radical-utils
        if any(g == n or g.startswith(n + ".") for n in names):
            return (g,)  # its own module, not the namespace it shares with others
    public = [n for n in names if not n.startswith("_")]
    return tuple(public or names) or (guess,)


def is_seen(op: dict[str, Any]) -> bool:
    """Whether the operation is judged here (not as a config factor's)."""
    return op.get("on") in SEEN or bool(op.get("if_built"))


def _process(fact: dict[str, Any]) -> dict[str, Any]:
    return {"pid": fact.get("pid"), "argv0": fact.get("argv0")}


def judge_seen(
    factor: str,
    ops: list[dict[str, Any]],
    facts: list[dict[str, Any]],
    run_dir: Path | None,
    python: str | None = None,
) -> tuple[list[dict[str, Any]], list[str]]:
    """Where a factor's env/wrapper/rundir/startup/package operations took effect, and the
    causes of those that took effect nowhere (``python``: the run's interpreter, whose venv
    says which modules a package factor's distribution installs)."""
    procs = [f for f in facts if f.get("fact") == "process"]
    where: list[dict[str, Any]] = []
    causes: list[str] = []
    env = {op["var"]: op["value"] for op in ops if op.get("on") == "env"}
    wrapper = {op["setting"]: op["value"] for op in ops if op.get("on") == "wrapper"}
    for part, check in ((env, _env), (wrapper, _wrapper)):
        if part:
            got, why = check(part, procs)
            where += got
            causes += [why] if why else []
    for op in ops:
        if op.get("on") == "rundir":
            got, why = _rundir(factor, str(op["path"]), facts, run_dir)
        elif op.get("on") == "startup":
            got, why = _startup(op, procs)
        elif op.get("on") == "package":
            got, why = release_proof(op, facts, python)
        elif op.get("on") == "interpreter":
            got, why = _interpreter(op, procs)
            if why is None and "gil" in op:  # a built variant's: GIL, build, JIT as seen
                got, why = judge_variant(op, procs, facts)
        else:
            continue
        where += got
        causes += [why] if why else []
    got, whys = judge_resolved([op for op in ops if op.get("on") == "dask_env"], facts)
    where, causes = where + got, causes + whys
    return where, [f"{factor}: {c}" for c in causes]


def _env(want: dict[str, str], procs: list[dict[str, Any]]) -> tuple[list[Any], str | None]:
    if not procs:
        return [{"process": None, "seen_by": LAUNCH, "env": want}], None
    good = [p for p in procs if all(_has(p.get("env") or {}, k, v) for k, v in want.items())]
    if not good:
        p = procs[0]
        saw = {k: (p.get("env") or {}).get(k) for k in want}
        return [], f"{p.get('argv0')} (pid {p.get('pid')}) saw {saw}, not {want}"
    return [{"process": _process(p), "env": want} for p in good[:MAX_FACTS]], None


#: Search paths perflab itself puts entries before (the hook, a start-up bundle, a treated
#: copy's bin/): the factor's entries need only be there.
PATH_LISTS = ("PYTHONPATH", "PATH", "LD_LIBRARY_PATH")


def _has(env: dict[str, Any], var: str, value: str) -> bool:
    seen = env.get(var)
    if seen == value:
        return True
    if var in PATH_LISTS and isinstance(seen, str):
        return set(value.split(os.pathsep)) <= set(seen.split(os.pathsep))
    return False


def _wrapper(want: dict[str, Any], procs: list[dict[str, Any]]) -> tuple[list[Any], str | None]:
    if not procs:
        return [{"process": None, "seen_by": LAUNCH, "wrapper": want}], None
    base = os.getpriority(os.PRIO_PROCESS, 0)
    expect: dict[str, Any] = {}
    if "nice" in want:  # nice -n N adds to perflab's own niceness, within -20..19
        expect["nice"] = max(-20, min(19, base + int(want["nice"])))
    if "policy" in want:
        expect["policy"] = str(want["policy"])
    cpus = _cpu_list(str(want["cpus"])) if "cpus" in want else None
    good = []
    for p in procs:
        ok = all(p.get(k) == v for k, v in expect.items())
        if cpus is not None:
            ok = ok and bool(p.get("cpus")) and set(p.get("cpus") or []) <= cpus
        if ok:
            good.append(p)
    if not good:
        p = procs[0]
        saw = {k: p.get(k) for k in ("nice", "policy", "cpus")}
        return [], f"{p.get('argv0')} (pid {p.get('pid')}) ran with {saw}, not {want}"
    return [
        {"process": _process(p), "scheduled": {k: p.get(k) for k in ("nice", "policy", "cpus")}}
        for p in good[:MAX_FACTS]
    ], None


def _interpreter(op: dict[str, Any], procs: list[dict[str, Any]]) -> tuple[list[Any], str | None]:
    """Every Python process of the command ran the variant (its real path; in a venv when
    the factor asks for one)."""
    if not procs:
        return [], "no Python process of the command ran (an interpreter reaches Python only)"
    for p in procs:
        py = p.get("python") or {}
        if py.get("executable") != op["path"] or (op.get("venv") and not py.get("venv")):
            where = "in a venv" if py.get("venv") else "outside a venv"
            return [], (
                f"{p.get('argv0')} (pid {p.get('pid')}) ran {py.get('executable')} "
                f"{py.get('version')} {where}, not {op['path']}"
            )
    return [{"process": _process(p), "python": p.get("python")} for p in procs[:MAX_FACTS]], None


def _cpu_list(text: str) -> set[int]:
    out: set[int] = set()
    for part in text.split(","):
        lo, _, hi = part.partition("-")
        out.update(range(int(lo), int(hi or lo) + 1))
    return out


def _rundir(
    factor: str, path: str, facts: list[dict[str, Any]], run_dir: Path | None
) -> tuple[list[Any], str | None]:
    if run_dir is None:
        return [], "perflab does not know the run directory"
    real, top = os.path.realpath(run_dir), os.path.realpath(path)
    if not Path(real).is_relative_to(top):
        return [], f"the run directory {real} is not under {top}"
    where: list[dict[str, Any]] = [
        {"object": "perflab run directory", "path": real, "filesystem": filesystem(real)}
    ]
    mine = [f for f in facts if f.get("factor") == factor]
    errors = [f for f in mine if f.get("fact") == "error"]
    if errors:
        return [], f"the hook could not move the program's Parsl run_dir: {errors[0].get('error')}"
    moved = [f for f in mine if f.get("fact") == "set" and f.get("option") == "run_dir"]
    configs = [f for f in facts if f.get("fact") == "created" and f.get("class") == "Config"]
    if configs and not moved:
        return [], "the program's Parsl Config was built, but its run_dir was not moved"
    where += [
        {"process": _process(f), "object": f.get("object"), "option": "run_dir",
         "old": f.get("old"), "new": f.get("new"), "overrode_program": f.get("overrode_program")}
        for f in moved[:MAX_FACTS]
    ]  # fmt: skip
    dfks = [f for f in facts if f.get("fact") == "run_dir" and f.get("path")]
    outside = [f["path"] for f in dfks if not Path(str(f["path"])).is_relative_to(real)]
    if outside:
        return [], f"the program's Parsl run_dir {outside[0]} is outside {real}"
    where += [
        {"process": _process(f), "object": "DataFlowKernel", "run_dir": f["path"],
         "filesystem": filesystem(str(f["path"]))}
        for f in dfks[:MAX_FACTS]
    ]  # fmt: skip
    return where, None


def filesystem(path: str) -> str | None:
    """The type of the filesystem holding ``path`` (``tmpfs``, ``ext4`` ...), from
    /proc/self/mounts (None where that cannot be read)."""
    try:
        with open("/proc/self/mounts") as f:
            mounts = [line.split()[1:3] for line in f if len(line.split()) > 2]
    except OSError:
        return None
    real = os.path.realpath(path)
    best: tuple[int, str | None] = (-1, None)
    for point, kind in mounts:
        point = point.replace("\\040", " ")
        if Path(real).is_relative_to(point) and len(point) > best[0]:
            best = (len(point), kind)
    return best[1]


def _startup(op: dict[str, Any], procs: list[dict[str, Any]]) -> tuple[list[Any], str | None]:
    if not procs:
        return [], "no Python process of the command ran (start-up factors reach Python only)"
    good, ran = [], []
    for p in procs:
        site = p.get("sitecustomize")
        bundle = bool(site) and (Path(str(site)).parent / "manifest.json").is_file()
        ran.append((p, site, bundle))
        if not bundle:
            continue
        if op.get("trim_path") and not p.get("trim_path"):
            continue
        if op.get("bundle") and not p.get("bundle_finder"):
            continue
        good.append(p)
    if not good:
        p, site, bundle = ran[0]
        what = f"perflab's start-up bundle {site}" if bundle else (site or "no sitecustomize")
        return [], (
            f"{p.get('argv0')} (pid {p.get('pid')}) started with {what} (trim_path "
            f"{p.get('trim_path')}, bundle finder {p.get('bundle_finder')}); another start-up "
            "factor's file, or the program's own, may hide this one"
        )
    return [
        {"process": _process(p), "sitecustomize": p.get("sitecustomize"),
         "trim_path": p.get("trim_path"), "bundle_finder": p.get("bundle_finder")}
        for p in good[:MAX_FACTS]
    ], None  # fmt: skip


def release_proof(
    op: dict[str, Any], facts: list[dict[str, Any]], python: str | None = None
) -> tuple[list[Any], str | None]:
    """Every process that imported the package (any top-level module its distribution
    installs) imported the release ``op`` names."""
    mods = release_modules(op["package"], python)
    imports = [f for f in facts if f.get("fact") == "import" and f.get("package") in mods]
    if not imports:
        return [], f"{NOT_IMPORTED} {', '.join(mods)}"
    where = []
    for f in imports:
        got = imported_version(str(f.get("file") or ""), op["package"]) or f.get("version")
        if not _same_version(got, op["version"]):
            release = got or "(no version found)"
            return [], (
                f"{f.get('argv0')} (pid {f.get('pid')}) imported {f.get('package')} {release} "
                f"from {f.get('file')}, not {op['version']}"
            )
        where.append({"process": _process(f), "imported": f.get("file"), "version": got})
    return where[:MAX_FACTS], None


def imported_version(file: str, distribution: str) -> str | None:
    """The release of ``distribution`` that ``file`` (a module of it) belongs to: the
    ``*.dist-info`` beside its top-level package in site-packages, or the version a treated
    copy was made from (its ``transform.json``); None when neither is found."""
    import json
    import re
    from email.parser import HeaderParser

    want = re.sub(r"[-_.]+", "_", distribution).lower()
    for parent in list(Path(file).parents)[:MAX_DEPTH]:
        meta = parent / "transform.json"
        if meta.is_file():
            try:
                return str(json.loads(meta.read_text())["version"])
            except (OSError, ValueError, KeyError):
                return None
        for info in parent.glob("*.dist-info"):
            name = re.sub(
                r"[-_.]+", "_", info.name.removesuffix(".dist-info").rsplit("-", 1)[0]
            ).lower()
            if name == want and (info / "METADATA").is_file():
                return HeaderParser().parsestr((info / "METADATA").read_text()).get("Version")
        if parent.name in ("site-packages", "dist-packages"):
            break
    return None


def _same_version(got: Any, want: str) -> bool:
    from packaging.version import InvalidVersion, Version

    if got is None:
        return False
    try:
        return Version(str(got)) == Version(want)
    except InvalidVersion:
        return str(got) == want
