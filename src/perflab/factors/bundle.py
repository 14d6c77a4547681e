"""Start-up treatment for Python's file-system load (the start-up study's system-image idea).

A *bundle* is one file holding the compiled code of every pure-Python module that importing
some modules loads (standard library and site-packages alike), and the exact paths of the
extension modules they load. A ``sitecustomize.py`` beside it reads the file once at
interpreter start-up and puts a finder first on ``sys.meta_path``: a bundled module is then
imported with no path search at all (no stat of each ``sys.path`` folder, no ``.pyc`` open),
and an extension module is loaded from its known path. Modules keep their real ``__file__``,
so data files and ``inspect.getsource`` work; anything not bundled is found as usual.

Activated by putting the bundle folder first on ``PYTHONPATH`` (an environment treatment, so
it reaches every process of the tree, including ``multiprocessing`` spawned workers).
"""

from __future__ import annotations

import hashlib
import json
import marshal
import os
import subprocess
from pathlib import Path
from typing import Any

from perflab.errors import PerflabError

BUNDLE_FILE = "bundle.marshal"

_COLLECT = r"""
import importlib, json, sys
missing = set()
class _Miss:
    @classmethod
    def find_spec(cls, name, path=None, target=None):
        missing.add(name)
        return None
sys.meta_path.append(_Miss)
for name in sys.argv[1].split(","):
    importlib.import_module(name)
sys.meta_path.remove(_Miss)
mods = [{"name": n, "origin": None, "path": None} for n in sorted(missing - set(sys.modules))]
for name, m in list(sys.modules.items()):
    spec = getattr(m, "__spec__", None)
    origin = getattr(spec, "origin", None)
    if spec is None or not origin or not origin.startswith("/") or spec.name != name:
        continue
    locs = spec.submodule_search_locations
    mods.append({"name": name, "origin": origin, "path": list(locs) if locs is not None else None})
print(json.dumps(mods))
"""

#: Written as the bundle's sitecustomize.py: standalone (importing anything more would cost
#: the file-system lookups it exists to save).
SITECUSTOMIZE = r'''"""perflab start-up bundle: imports served from one pre-compiled file."""
import marshal, os, sys
TRIM_PATH = {trim}
from importlib.machinery import ExtensionFileLoader, ModuleSpec

_HERE = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(_HERE, "bundle.marshal"), "rb") as _f:
    _TABLE = marshal.loads(_f.read())


class _Loader:
    def __init__(self, name, origin, code):
        self.name, self.path, self._code = name, origin, code

    def create_module(self, spec):
        return None

    def exec_module(self, module):
        exec(self._code, module.__dict__)

    def get_code(self, name):
        return self._code

    def get_filename(self, name):
        return self.path

    def get_source(self, name):
        try:
            with open(self.path, encoding="utf-8") as f:
                return f.read()
        except OSError:
            return None

    def get_resource_reader(self, name):
        # importlib.resources (e.g. certifi's CA file) reads beside the real file.
        from importlib.readers import FileReader

        return FileReader(self)

    def is_package(self, name):
        return _TABLE[name][1] is not None


class BundleFinder:
    @classmethod
    def find_spec(cls, name, path=None, target=None):
        entry = _TABLE.get(name)
        if entry is None:
            return None
        origin, locations, code = entry
        if origin is None:
            # Looked for and found nowhere when the bundle was made: fail at once.
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        if code is None:
            loader = ExtensionFileLoader(name, origin)
        else:
            loader = _Loader(name, origin, code)
        spec = ModuleSpec(name, loader, origin=origin, is_package=locations is not None)
        if locations is not None:
            spec.submodule_search_locations = list(locations)
        spec.has_location = True
        return spec

    @classmethod
    def invalidate_caches(cls):
        pass


if _TABLE:
    sys.meta_path.insert(0, BundleFinder)
if TRIM_PATH:
    # Every sys.path entry costs a stat per import that reaches the path finder.
    sys.path[:] = [p for p in sys.path if p == "" or os.path.isdir(p) or os.path.isfile(p)]
'''


def loaded_modules(
    python: str, modules: list[str], env: dict[str, str] | None = None
) -> list[dict[str, Any]]:
    """The file-backed modules that importing ``modules`` loads, under ``python``."""
    out = subprocess.run(
        [python, "-c", _COLLECT, ",".join(modules)],
        check=True,
        capture_output=True,
        text=True,
        env=env,
    )
    mods: list[dict[str, Any]] = json.loads(out.stdout.strip().splitlines()[-1])
    return mods


def fingerprint(mods: list[dict[str, Any]]) -> str:
    """Identity of the bundled files (path, size, mtime): a changed file makes a new bundle."""
    h = hashlib.sha256()
    for m in sorted(mods, key=lambda m: str(m["name"])):
        if not m["origin"]:
            h.update(f"{m['name']}\0missing\n".encode())
            continue
        st = os.stat(m["origin"])
        h.update(f"{m['name']}\0{m['origin']}\0{st.st_size}\0{st.st_mtime_ns}\n".encode())
    return h.hexdigest()[:16]


def build_bundle(
    python: str,
    modules: list[str],
    dest: Path,
    env: dict[str, str] | None = None,
    trim_path: bool = False,
) -> dict[str, Any]:
    """Write ``dest/bundle.marshal`` and ``dest/sitecustomize.py``; return the manifest.

    Code is compiled by the running interpreter: call it under ``python`` itself (as
    :func:`bundle_dir` does), since marshal data is specific to one Python version.
    """
    mods = loaded_modules(python, modules, env) if modules else []
    table: dict[str, tuple[str | None, list[str] | None, Any]] = {}
    for m in mods:
        origin = m["origin"]
        if origin is None:
            table[m["name"]] = (None, None, None)
        elif origin.endswith(".py"):
            source = Path(origin).read_bytes()
            code = compile(source, origin, "exec", dont_inherit=True)
            table[m["name"]] = (origin, m["path"], code)
        elif origin.endswith(".so"):
            table[m["name"]] = (origin, m["path"], None)
    dest.mkdir(parents=True, exist_ok=True)
    tmp = dest / (BUNDLE_FILE + ".tmp")
    tmp.write_bytes(marshal.dumps(table))
    tmp.replace(dest / BUNDLE_FILE)
    (dest / "sitecustomize.py").write_text(SITECUSTOMIZE.replace("{trim}", str(trim_path)))
    manifest = {
        "python": python,
        "modules": modules,
        "bundled": sum(1 for v in table.values() if v[2] is not None),
        "extensions": sum(1 for v in table.values() if v[0] and v[2] is None),
        "missing": sum(1 for v in table.values() if v[0] is None),
        "fingerprint": fingerprint(mods),
        "trim_path": trim_path,
        "files": [[m["name"], m["origin"]] for m in mods],
        "bytes": (dest / BUNDLE_FILE).stat().st_size,
    }
    (dest / "manifest.json").write_text(json.dumps(manifest, indent=1))
    return manifest


def is_current(dest: Path, modules: list[str], trim_path: bool) -> bool:
    """Whether ``dest`` holds a bundle of ``modules`` whose files have not changed since."""
    try:
        manifest = json.loads((dest / "manifest.json").read_text())
        mods = [{"name": n, "origin": o} for n, o in manifest["files"]]
        return bool(
            manifest["modules"] == modules
            and manifest["trim_path"] == trim_path
            and manifest["fingerprint"] == fingerprint(mods)
        )
    except (OSError, ValueError, KeyError, TypeError):
        return False


def bundle_dir(
    python: str, modules: list[str], dest: Path, env: dict[str, str], trim_path: bool = False
) -> Path:
    """``dest``, holding a current bundle of ``modules`` for ``python`` (built if needed)."""
    if is_current(dest, modules, trim_path):
        return dest
    cmd = [python, "-m", "perflab.factors.bundle", str(dest), ",".join(modules), str(trim_path)]
    out = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)
    if out.returncode != 0:
        tail = (out.stderr.strip().splitlines() or ["no output"])[-1]
        raise PerflabError(f"start-up bundle of {', '.join(modules)}: could not be built: {tail}")
    return dest


if __name__ == "__main__":
    import sys

    args = sys.argv[1:]
    built = build_bundle(
        sys.executable,
        [m for m in args[1].split(",") if m],
        Path(args[0]),
        dict(os.environ),
        trim_path=args[2] == "True",
    )
    print(json.dumps({k: v for k, v in built.items() if k != "files"}))
