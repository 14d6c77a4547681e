"""Patched trees: private copies of installed packages with a factor's diff applied.

The copy lives in a cache keyed by package version and patch contents; the run's
PYTHONPATH (and, for packages whose modules are also installed as scripts, PATH) puts the
copy first.  The user's site-packages is never written. Whether a diff may be applied at all
is checked earlier, when the catalog resolves the factor (``factors/patching.py``).
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from perflab.factors.patching import diff_targets, package_dir, package_path
from perflab.files import build_dir

#: Modules some packages also install as scripts on PATH (Parsl launches these by name).
SCRIPT_COPIES = {
    "parsl": {
        "interchange.py": "parsl/executors/high_throughput/interchange.py",
        "process_worker_pool.py": "parsl/executors/high_throughput/process_worker_pool.py",
    }
}


class PatchError(Exception):
    """A patch did not apply: the run is recorded as failed with this message."""


def patched_tree(patches: list[dict[str, Any]], cache_root: Path) -> Path:
    """A directory holding patched copies of the packages (and ``bin/`` scripts).

    Raises PatchError with patch's own output when a hunk does not apply.
    """
    h = hashlib.sha256()
    for p in patches:
        h.update(p["package"].encode())
        h.update(importlib.metadata.version(p["package"]).encode())
        h.update(Path(p["diff"]).read_bytes())
    dest = cache_root / h.hexdigest()[:20]
    if (dest / ".complete").exists():
        return dest
    with build_dir(dest) as tmp:
        for package in dict.fromkeys(p["package"] for p in patches):
            # a namespace package's copy (radical/saga) shadows only that subpackage
            shutil.copytree(
                package_dir(package),
                tmp / package_path(package),
                ignore=shutil.ignore_patterns("__pycache__"),
                ignore_dangling_symlinks=True,  # a link to nowhere: nothing to copy or import
            )
        for p in patches:
            proc = subprocess.run(
                ["patch", "-p1", "--forward", "--batch", "-d", str(tmp), "-i", str(p["diff"])],
                capture_output=True,
                text=True,
            )
            if proc.returncode != 0:
                out = (proc.stdout + proc.stderr).strip()
                raise PatchError(f"patch {p['factor']} ({p['diff']}) does not apply:\n{out}")
        for p in patches:
            # Python sources must still compile (a patch may also change a packaged script)
            for rel in (r for r in diff_targets(Path(p["diff"])) if r.endswith(".py")):
                src = (tmp / rel).read_text()
                try:
                    compile(src, rel, "exec")
                except SyntaxError as exc:
                    raise PatchError(f"patch {p['factor']} leaves {rel} invalid: {exc}") from None
        write_scripts(tmp, {p["package"] for p in patches}, sys.executable)
    return dest


def write_scripts(tree: Path, packages: set[str], python: str) -> None:
    """The packages' launcher scripts (Parsl's interchange.py, process_worker_pool.py) from
    the private copy into ``tree/bin``, under ``python``, so the processes a task system
    starts import the copy too. A script already there is kept (a cached tree in use)."""
    for package in packages:
        for script, rel in SCRIPT_COPIES.get(package, {}).items():
            out = tree / "bin" / script
            if not out.exists():
                out.parent.mkdir(exist_ok=True)
                out.write_text(f"#!{python}\n" + (tree / rel).read_text())
                out.chmod(0o700)
