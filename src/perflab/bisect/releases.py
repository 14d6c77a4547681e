"""Releases: the versions the package index lists between two ends (as ``pip index
versions`` sees them), and the tag that names a release in a clone."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from packaging.version import InvalidVersion, Version

from perflab.bisect.commits import git
from perflab.errors import PerflabError


def as_version(text: str) -> Version | None:
    """``text`` as a release version (a tag's ``v`` or ``package-`` prefix dropped)."""
    try:
        return Version(re.sub(r"^(v|[A-Za-z_.-]+-)(?=\d)", "", text))
    except InvalidVersion:
        return None


def index_versions(package: str, timeout: float = 120) -> list[str]:
    """Every release of ``package`` on the package index pip is set up for, oldest first; a
    PerflabError when the index cannot be reached or does not know the package."""
    argv = [sys.executable, "-m", "pip", "index", "versions", package,
            "--disable-pip-version-check", "--retries", "0", "--timeout", "15"]  # fmt: skip
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise PerflabError(f"package index: {exc}") from None
    found = re.search(r"Available versions: (.*)", proc.stdout)
    if proc.returncode != 0 or not found:
        lines = [ln for ln in (proc.stderr or proc.stdout).splitlines() if ln.strip()]
        why = lines[-1] if lines else "no answer"
        raise PerflabError(f"package index: cannot list the releases of {package} ({why})")
    versions = [v.strip() for v in found.group(1).split(",") if v.strip()]
    return sorted(versions, key=Version)


def between(versions: list[str], good: str, bad: str) -> list[str]:
    """The releases from ``good`` to ``bad`` (both included, oldest first; pre-releases only
    at the ends); a PerflabError when an end is not listed or the ends are swapped."""
    listed = {Version(v): v for v in versions}
    ends = []
    for flag, end in (("--range's first end", good), ("--range's second end", bad)):
        v = as_version(end)
        if v is None or v not in listed:
            raise PerflabError(f"{flag} {end}: not a release the package index lists")
        ends.append(v)
    lo, hi = ends
    if lo >= hi:
        raise PerflabError(f"--range {good}..{bad}: {good} is not older than {bad} (ends swapped?)")
    return [listed[v] for v in sorted(listed) if lo <= v <= hi and (not v.is_prerelease
            or v in (lo, hi))]  # fmt: skip


def release_tag(repo: Path, version: str) -> str | None:
    """The tag of ``repo`` that names release ``version`` (``2025.12.01`` for 2025.12.1)."""
    want = Version(version)
    for tag in git(repo, "tag", "--list").split():
        if as_version(tag) == want:
            return tag
    return None
