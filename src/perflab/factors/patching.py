"""Source patches applied to a *private copy* of an installed package.

The copy lives in a cache keyed by package version and patch contents; the run's
PYTHONPATH (and, for packages whose modules are also installed as scripts, PATH) puts the
copy first.  The user's site-packages is never written.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import importlib.util
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from perflab.errors import PerflabError
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


def package_dir(package: str) -> Path:
    try:
        spec = importlib.util.find_spec(package)
    except ModuleNotFoundError:  # a dotted name whose parent is missing
        spec = None
    if spec is None or not spec.submodule_search_locations:
        raise PerflabError(f"patch: package {package!r} is not installed")
    return Path(next(iter(spec.submodule_search_locations))).resolve()


def package_path(package: str) -> str:
    """The package's path relative to site-packages (``radical.saga`` -> ``radical/saga``)."""
    return package.replace(".", "/")


def site_dir(package: str) -> Path:
    """The directory the package's top-level name lives in (site-packages)."""
    d = package_dir(package)
    for _ in range(package.count(".") + 1):
        d = d.parent
    return d


def diff_targets(diff: Path) -> list[str]:
    """Paths (relative to site-packages) that a ``-p1`` unified diff changes."""
    targets = []
    for line in diff.read_text().splitlines():
        m = re.match(r"^\+\+\+ b/(\S+)", line)
        if m:
            targets.append(m.group(1))
    return targets


_REFUSED = ("rename from", "rename to", "copy from", "copy to", "GIT binary patch",
            "Binary files", "deleted file mode")  # fmt: skip
_MODE = re.compile(r"^(old mode|new mode|new file mode) (\d+)$")
_HUNK = re.compile(r"^@@ -\d+(?:,(\d+))? \+\d+(?:,(\d+))? @@")


def check_headers(diff: Path, package: str, where: str) -> None:
    """Refuse a diff that could write outside the package's private copy: a path that is
    absolute, climbs with ``..`` or leaves the package, a symlink or any non-regular mode,
    a rename, copy, deletion or binary patch (PerflabError naming file and line). Hunk
    bodies are skipped by their counts (a removed line may well start with ``--``)."""
    inside = f"{package_path(package)}/"
    old = new = 0
    for n, line in enumerate(diff.read_text(errors="replace").splitlines(), 1):
        if old > 0 or new > 0:  # inside a hunk
            old -= line[:1] in (" ", "-", "")
            new -= line[:1] in (" ", "+", "")
            continue
        at = f"{where}: {diff}:{n}"
        hunk = _HUNK.match(line)
        if hunk:
            old, new = (int(c) if c is not None else 1 for c in hunk.groups())
            continue
        if line.startswith(_REFUSED):
            raise PerflabError(f"{at}: {' '.join(line.split()[:2])} is not allowed")
        mode = _MODE.match(line)
        if mode and mode.group(2) not in ("100644", "100755"):
            raise PerflabError(f"{at}: mode {mode.group(2)} (only regular files) in {line!r}")
        paths: list[str] = []
        if line.startswith("diff --git "):
            paths = line[len("diff --git ") :].split()
        elif line.startswith(("--- ", "+++ ")) and line[4:].strip() != "/dev/null":
            paths = [line[4:].split("\t")[0].strip()]
        for path in paths:
            rel = path[2:] if path[:2] in ("a/", "b/") else path
            if path.startswith("/") or ".." in Path(rel).parts or not rel.startswith(inside):
                raise PerflabError(f"{at}: path {path!r} is outside package {package}")


def check_patch(package: str, diff: Path, version: str | None, where: str) -> None:
    """Refuse a patch that cannot be meant for the installed package (PerflabError)."""
    if not diff.is_file():
        raise PerflabError(f"{where}: patch file {diff} does not exist")
    installed = importlib.metadata.version(package)
    if version is not None and installed != version:
        raise PerflabError(
            f"{where}: patch made for {package} {version}, but {package} {installed} is "
            f"installed; regenerate it, or describe the change as a transform (docs/transforms.md)"
        )
    check_headers(diff, package, where)
    site = site_dir(package)
    targets = diff_targets(diff)
    if not targets:
        raise PerflabError(f"{where}: {diff} is not a unified diff with b/ paths")
    for rel in targets:
        if not rel.startswith(f"{package_path(package)}/"):
            raise PerflabError(f"{where}: {diff} patches {rel}, outside package {package}")
        if not (site / rel).is_file():
            raise PerflabError(f"{where}: {diff} patches {rel}, which does not exist in {site}")


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
