"""Source patches as the catalog sees them: which installed package a diff is for, and
whether it may be applied at all (checked when a treatment set is resolved, before anything
runs). The patched copy itself is made by ``prepare/patched.py``.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import re
from pathlib import Path

from perflab.errors import PerflabError


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
    try:
        text = diff.read_text()
    except UnicodeDecodeError:
        raise PerflabError(f"{diff}: not a text diff (it is not UTF-8)") from None
    except OSError as exc:
        raise PerflabError(f"{diff}: cannot read ({exc.strerror or exc})") from None
    for line in text.splitlines():
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
