"""CPython's source from Debian's archive: ``apt-get source --download-only pythonX.Y`` with
a sources list, lists and cache of perflab's own (a 0700 folder), so the system's apt
sources are neither read nor changed. Debian's ``orig`` tarball is CPython's release
tarball; Debian's own patches (the ``debian`` tarball) are not applied.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from perflab.errors import PerflabError
from perflab.files import private_dir

#: The Debian suite whose deb-src serves each CPython minor version.
SUITES = {"3.11": "bookworm", "3.13": "trixie"}
MIRROR = "http://deb.debian.org/debian"
APT_TIMEOUT_S = 900.0


def apt_options(apt: Path) -> list[str]:
    """apt-get options that make it use only the private state under ``apt``."""
    return [
        "-o", f"Dir::Etc::SourceList={apt / 'sources.list'}",
        "-o", "Dir::Etc::SourceParts=/dev/null",
        "-o", f"Dir::State::Lists={apt / 'lists'}",
        "-o", f"Dir::Cache={apt / 'cache'}",
    ]  # fmt: skip


def suite_for(version: str) -> str:
    """The Debian suite serving ``python<version>``'s source; bad input otherwise."""
    suite = SUITES.get(version)
    if suite is None:
        raise PerflabError(
            f"--version {version}: Debian serves CPython's source for "
            f"{', '.join(SUITES)} here (give --source DIR|TARBALL for another)"
        )
    return suite


def debian_tarball(version: str, root: Path) -> Path:
    """The original tarball of Debian's ``python<version>`` source package, downloaded once
    into ``root/debian-<suite>/`` (reused when there)."""
    suite = suite_for(version)
    home = private_dir(root / f"debian-{suite}")
    found = sorted(home.glob(f"python{version}_*.orig.tar.*"))
    found = [f for f in found if not f.name.endswith(".asc")]
    if found:
        return found[-1]
    apt = private_dir(home / "apt")
    for sub in ("lists/partial", "cache/archives/partial"):
        private_dir(apt / sub)
    (apt / "sources.list").write_text(f"deb-src {MIRROR} {suite} main\n")
    opts = apt_options(apt)
    _apt(["apt-get", *opts, "update"], home, "apt-get update")
    _apt(["apt-get", *opts, "source", "--download-only", f"python{version}"], home,
         f"apt-get source python{version}")  # fmt: skip
    found = [
        f for f in sorted(home.glob(f"python{version}_*.orig.tar.*")) if not f.name.endswith(".asc")
    ]
    if not found:
        raise PerflabError(f"apt-get source python{version}: no orig tarball in {home}")
    return found[-1]


def _apt(argv: list[str], cwd: Path, what: str) -> None:
    try:
        proc = subprocess.run(argv, cwd=cwd, capture_output=True, text=True,
                              timeout=APT_TIMEOUT_S)  # fmt: skip
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise PerflabError(f"{what}: {exc}") from None
    if proc.returncode != 0:
        lines = [ln for ln in (proc.stderr or proc.stdout).splitlines() if ln.strip()]
        raise PerflabError(f"{what} failed: {' | '.join(lines[-2:])}")
