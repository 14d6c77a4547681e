"""``atlas init`` and ``atlas add``: every input checked before anything is written, then the
directory made private (0700, owner-checked), the store made and ``perflab.toml`` written
atomically last, so a refused init leaves nothing behind."""

from __future__ import annotations

import shutil
from dataclasses import replace
from pathlib import Path

from perflab.atlas import project
from perflab.atlas.project import AXES, Atlas, Benchmark
from perflab.atlas.store import NAME, Store
from perflab.errors import PerflabError
from perflab.files import private_dir


def init(dir_: str | Path, repo: str | Path, package: str, bench: Benchmark, axis: str = "commits",
         since: str | None = None, every: int = 1, build: str = "tree",
         until: str | None = None) -> Atlas:  # fmt: skip
    """A new atlas in ``dir_`` watching ``repo`` (a clone of ``package``) with one benchmark."""
    from perflab.bisect.commits import check_clone

    d = Path(dir_)
    if (d / project.FILE).exists() or (d / NAME).exists():
        raise PerflabError(f"{d}: an atlas is already here (add benchmarks with atlas add)")
    if axis not in AXES:
        raise PerflabError(f"--axis {axis}: one of {', '.join(AXES)}")
    if every < 1:
        raise PerflabError(f"--every {every}: at least 1")
    clone = check_clone(Path(repo), package)
    since_sha = _ref(clone, since, package) if since else None
    until_sha = _ref(clone, until, package) if until else None
    existed = d.exists()
    try:
        d = private_dir(d)
        Store(d, create=True).close()
    except PerflabError:
        if not existed:
            shutil.rmtree(d, ignore_errors=True)
        raise
    atlas = Atlas(str(clone), package, axis, since_sha, until_sha, every, build,
                  benchmarks={bench.name: bench})  # fmt: skip
    try:
        project.write(d, atlas)
    except OSError as exc:
        (d / NAME).unlink(missing_ok=True)
        raise PerflabError(f"{d}: cannot write {project.FILE}: {exc.strerror}") from None
    return atlas


def _ref(clone: Path, ref: str, package: str) -> str:
    """The commit ``ref`` names: a commit, branch or tag, or a release whose tag spells its
    version otherwise (``2025.12.01`` for 2025.12.1)."""
    from perflab.bisect.commits import resolve
    from perflab.bisect.releases import release_tag

    try:
        return resolve(clone, ref, package)
    except PerflabError:
        tag = release_tag(clone, ref) if ref[:1].isdigit() else None
        if tag is None:
            raise
        return resolve(clone, tag, package)


def add(dir_: str | Path, bench: Benchmark) -> Atlas:
    """The atlas in ``dir_`` with one more benchmark (its name must be new)."""
    d = private_dir(Path(dir_), create=False)
    atlas = project.load(d)
    if bench.name in atlas.benchmarks:
        raise PerflabError(f"benchmark {bench.name}: already in {d / project.FILE}")
    Store(d).close()  # writable, or one line now
    atlas = replace(atlas, benchmarks={**atlas.benchmarks, bench.name: bench})
    project.write(d, atlas)
    return atlas
