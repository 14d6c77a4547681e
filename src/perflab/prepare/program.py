"""The packages a command's own program needs, for a venv of another interpreter (an
``interpreter`` factor on ``--command "python app.py"``): the distributions installed in the
command's own environment that the program imports, at the versions installed there.

How they are found, and why so: the program's own files are read (the script, or ``-m``'s
module, or ``-c``'s code, and the local modules they import from beside it) for every
``import`` and ``from … import`` anywhere in them, also inside functions (a task's imports
run in the workers only). The command's own interpreter then imports those names — the
installed packages only, never the program's own files, so nothing of the program runs — and
maps every top-level module that import brought in to its distribution
(``importlib.metadata.packages_distributions``): ``from dask.distributed import Client``
brings ``distributed``, which Dask does not require. The distributions' requirements, as
installed there, close the set (what a package imports lazily, a worker's imports). A probe
run of the whole program would see the same and also imports made from strings, but it
costs a full run (minutes, with the program's side effects) before a variant's first run;
reading the files takes milliseconds, importing the packages seconds (kept per interpreter,
names and installed versions), and the set is the venv's cache key.

Imports made from strings (``importlib.import_module(name)``) and plugins found by entry
point are not seen; such a package can be given as a package factor beside the interpreter.
"""

from __future__ import annotations

import ast
import functools
import hashlib
import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

from perflab.files import atomic_write

#: Never installed into a variant: perflab comes from PYTHONPATH.
NOT_PINNED = ("perflab",)
#: The most local files read (a program's own package), and their size each.
MAX_FILES = 200
MAX_BYTES = 2 << 20
PROBE_TIMEOUT_S = 300.0
PYTHON_RE = re.compile(r"python[\d.]*t?")

#: What is installed where the command's interpreter imports from (no import: quick).
_DISTS = r"""
import json, sys
from importlib import metadata as m
dists = {}
for d in m.distributions():
    name = d.metadata["Name"]
    if name and name not in dists:
        dists[name] = {"version": d.version, "requires": d.requires or []}
print(json.dumps({"python": sys.version.split()[0], "dists": dists}))
"""
#: The distributions whose modules importing the program's imports brings in (seconds).
_IMPORTS = r"""
import importlib, json, sys
from importlib import metadata as m
before = set(sys.modules)
for name in json.loads(sys.argv[1]):
    try:
        importlib.import_module(name)
    except BaseException:
        pass
tops = {n.split(".")[0] for n in set(sys.modules) - before}
where = m.packages_distributions()
print(json.dumps(sorted({x for t in tops for x in where.get(t, [])})))
"""


def canonical(name: str) -> str:
    """A distribution's name as pip compares it."""
    return re.sub(r"[-_.]+", "-", name).lower()


def program_files(command: str, cwd: str) -> tuple[list[Path], list[str]]:
    """The program's own files a ``python …`` command runs (its script or ``-m`` module;
    none for another program) and the names of ``-m``/``-c`` code that is not a file."""
    try:
        argv = shlex.split(command)
    except ValueError:
        return [], []
    # the first Python the command runs (after ``env X=1``, ``nice``, ``cd d &&`` ...)
    first = next(
        (
            i
            for i, a in enumerate(argv)
            if a.endswith(".py") or PYTHON_RE.fullmatch(a.split("/")[-1])
        ),
        None,
    )
    if first is None:
        return [], []
    if argv[first].endswith(".py"):
        return [Path(cwd, argv[first])], []
    args = iter(argv[first + 1 :])
    for a in args:
        if a in ("-W", "-X", "-Q"):  # an option with its own argument
            next(args, None)
        elif a == "-m":
            top = next(args, "").split(".")[0]
            local = _local(top, Path(cwd))
            # an installed module run by -m is imported by its package only: its own
            # module (a __main__) would run the program
            return (local, []) if local else ([], [top] if top else [])
        elif a == "-c":
            return [], [f"code:{next(args, '')}"]
        elif not a.startswith("-"):
            return [Path(cwd, a)], []
    return [], []


def _local(top: str, folder: Path) -> list[Path]:
    """The program's own module or package ``top`` beside its script, as files."""
    if not top.isidentifier():
        return []
    if (folder / f"{top}.py").is_file():
        return [folder / f"{top}.py"]
    if (folder / top).is_dir():
        return sorted((folder / top).rglob("*.py"))[:MAX_FILES]
    return []


def _imports(tree: ast.AST) -> set[str]:
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            out.add(node.module)
            out |= {f"{node.module}.{a.name}" for a in node.names if a.name != "*"}
    return out


def imported_names(files: list[Path], code: list[str]) -> tuple[list[str], list[str]]:
    """(dotted names the program imports that are neither the standard library's nor its
    own, the program's files read), following its own modules beside the first file."""
    folder = files[0].parent if files else None
    todo, seen, names = list(files), set[Path](), set[str]()
    for c in code:
        if c.startswith("code:"):
            try:
                names |= _imports(ast.parse(c[len("code:") :]))
            except SyntaxError:
                pass
        else:
            names.add(c)
    while todo and len(seen) < MAX_FILES:
        f = todo.pop()
        if f in seen or not f.is_file() or f.stat().st_size > MAX_BYTES:
            continue
        seen.add(f)
        try:
            found = _imports(ast.parse(f.read_bytes()))
        except (SyntaxError, ValueError, OSError):
            continue
        for name in found:
            local = _local(name.split(".")[0], folder) if folder else []
            if local:
                todo += local
            else:
                names.add(name)
    outside = sorted(
        n
        for n in names
        if n.split(".")[0] not in sys.stdlib_module_names and n.split(".")[0] != "__future__"
    )
    return outside, [str(f) for f in sorted(seen)]


def _run(python: str, code: str, *args: str) -> Any:
    try:
        proc = subprocess.run(
            [python, "-c", code, *args],
            capture_output=True, text=True, timeout=PROBE_TIMEOUT_S, cwd="/",
        )  # fmt: skip
        return json.loads(proc.stdout) if proc.returncode == 0 else None
    except (OSError, subprocess.SubprocessError, ValueError):
        return None


@functools.lru_cache(maxsize=16)
def _probe(python: str, names: tuple[str, ...], cache: Path | None) -> dict[str, Any]:
    """What ``python``'s environment holds and which of it importing ``names`` brings in;
    the import (seconds for Parsl or Dask, every run of a campaign on a batch system) is
    kept in ``cache`` (a private folder) per interpreter, names and installed versions."""
    found = _run(python, _DISTS)
    if not isinstance(found, dict):
        return {"dists": {}, "imported": []}
    installed = sorted((k, v["version"]) for k, v in found["dists"].items())
    key = [os.path.realpath(python), list(names), installed]
    file = None
    if cache is not None:
        digest = hashlib.sha256(json.dumps(key).encode()).hexdigest()[:16]
        file = cache / f".program-{digest}.json"
        if file.is_file():
            try:
                return {**found, "imported": list(json.loads(file.read_text()))}
            except (OSError, ValueError):
                pass
    imported = _run(python, _IMPORTS, json.dumps(list(names)))
    if not isinstance(imported, list):
        return {**found, "imported": []}
    if file is not None:
        atomic_write(file, json.dumps(imported))
    return {**found, "imported": imported}


def _closure(found: dict[str, Any]) -> dict[str, str]:
    """The imported distributions and what they require, as installed: name -> version."""
    from packaging.markers import default_environment
    from packaging.requirements import InvalidRequirement, Requirement

    dists = {canonical(k): v for k, v in found["dists"].items()}
    version = str(found.get("python") or "")
    env = {str(k): str(v) for k, v in default_environment().items()} | {"extra": ""}
    if version:
        env |= {"python_full_version": version, "python_version": ".".join(version.split(".")[:2])}
    out: dict[str, str] = {}
    todo = [canonical(n) for n in found["imported"]]
    while todo:
        name = todo.pop()
        if name in out or name not in dists or name in NOT_PINNED:
            continue
        out[name] = dists[name]["version"]
        for text in dists[name]["requires"]:
            try:
                req = Requirement(text)
            except InvalidRequirement:
                continue
            if req.marker is None or req.marker.evaluate(env):
                todo.append(canonical(req.name))
    return dict(sorted(out.items()))


def program_packages(
    command: str, cwd: str, python: str, cache: Path | None = None
) -> dict[str, Any]:
    """What a variant's venv must hold for ``command``'s program: ``packages`` (name ->
    version installed in ``python``'s environment), ``modules`` (what the program imports
    from outside itself), ``files`` (its own files read) and ``python`` (where they were
    looked up)."""
    files, code = program_files(command, cwd)
    names, read = imported_names(files, code)
    found = _probe(python, tuple(names), cache) if names else {"dists": {}, "imported": []}
    return {"packages": _closure(found), "modules": names, "files": read, "python": python}
