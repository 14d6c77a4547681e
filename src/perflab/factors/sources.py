"""Where a package's source is: the copy an interpreter imports, or the package inside a
developer's tree, and its modules. Read, never written: the catalog's generators and the
checks before a run need these, and ``prepare/transformed.py`` copies what they find."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
from pathlib import Path

from perflab.errors import PerflabError

#: The package's folder and its distribution's version: the distribution named as the
#: package (``radical.saga``) or its top module, else the one that installs that module
#: (``yaml`` is PyYAML's, ``zmq`` pyzmq's).
_LOCATE = """import importlib.metadata as m, importlib.util as u, json, sys
s = u.find_spec(sys.argv[1])
top = sys.argv[1].split(".")[0]
v = None
for name in [sys.argv[1], top, *(m.packages_distributions().get(top, []) if s else [])]:
    try:
        v = m.version(name) if s else None
        break
    except m.PackageNotFoundError:
        continue
print(json.dumps([list(s.submodule_search_locations)[0] if s and v else None, v]))
"""


def locate(package: str, python: str) -> tuple[Path, str]:
    """Where ``python`` imports ``package`` from, and its version (PerflabError if absent)."""
    proc = subprocess.run(
        [python, "-c", _LOCATE, package], capture_output=True, text=True, timeout=60
    )
    where, version = json.loads(proc.stdout) if proc.returncode == 0 else (None, None)
    if not where:
        raise PerflabError(f"transform: package {package!r} is not importable by {python}")
    return Path(where).resolve(), str(version)


def tree_package(tree: Path, package: str) -> tuple[Path, str]:
    """The package directory inside a source tree (``DIR/pkg`` or ``DIR/src/pkg``) and a
    version naming its content (``tree-<sha>``); PerflabError when it is not there."""
    rel = package.replace(".", "/")
    for cand in (tree / rel, tree / "src" / rel):
        if (cand / "__init__.py").is_file():
            h = hashlib.sha256()
            for f in sorted(cand.rglob("*.py")):
                h.update(str(f.relative_to(cand)).encode() + b"\0" + _content(f))
            return cand.resolve(), f"tree-{h.hexdigest()[:12]}"
    raise PerflabError(
        f"--source {tree}: no package {package!r} in it (looked for {rel}/ and src/{rel}/)"
    )


def _content(file: Path) -> bytes:
    """A file's bytes; a link that leads nowhere (dangling, or a loop) by its own text."""
    try:
        return file.read_bytes()
    except OSError:
        if file.is_symlink():
            return b"->" + os.fsencode(os.readlink(file))
        raise


def modules(pkg_dir: Path, package: str) -> dict[str, Path]:
    """Dotted module name -> file, for every ``.py`` under the package directory."""
    out = {}
    for f in sorted(pkg_dir.rglob("*.py")):
        parts = f.relative_to(pkg_dir).with_suffix("").parts
        parts = parts[:-1] if parts[-1] == "__init__" else parts
        out[".".join((package, *parts))] = f
    return out
