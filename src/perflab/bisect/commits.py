"""A git clone of the package, read only: the commits between two ends, their subjects and
PR numbers, releases' tags, and each commit's tree built once into perflab's cache with
``git archive`` (the user's working tree, index and refs are never touched)."""

from __future__ import annotations

import re
import subprocess
import tarfile
from dataclasses import dataclass
from pathlib import Path

from perflab.errors import PerflabError
from perflab.files import build_dir

PR_RE = re.compile(r"\(#(\d+)\)|^Merge pull request #(\d+)")


@dataclass(frozen=True)
class Commit:
    sha: str
    subject: str

    @property
    def short(self) -> str:
        return self.sha[:10]

    @property
    def pr(self) -> int | None:
        """The PR number the subject names (``… (#1234)``, ``Merge pull request #1234``)."""
        m = PR_RE.search(self.subject)
        return int(m.group(1) or m.group(2)) if m else None


def git(repo: Path, *args: str) -> str:
    """``git -C repo args…``'s output; a PerflabError with git's last line if it fails."""
    try:
        proc = subprocess.run(
            ["git", "-C", str(repo), *args], capture_output=True, text=True, timeout=120
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise PerflabError(f"git {args[0]} in {repo}: {exc}") from None
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or ["failed"])[-1]
        raise PerflabError(f"git {' '.join(args[:2])} in {repo}: {last}")
    return proc.stdout


def check_clone(repo: Path, package: str) -> Path:
    """``repo`` resolved, if it is a git clone holding ``package`` (its import directory at
    the top or under ``src/`` at HEAD); else a PerflabError saying what it is not."""
    repo = Path(repo).expanduser().resolve()
    if not repo.is_dir():
        raise PerflabError(f"--repo {repo}: no such directory")
    try:
        git(repo, "rev-parse", "--git-dir")
    except PerflabError:
        raise PerflabError(f"--repo {repo}: not a git clone") from None
    top = package.replace("-", "_")
    listed = git(repo, "ls-tree", "-d", "--name-only", "HEAD", top, f"src/{top}").split()
    if not listed:
        raise PerflabError(f"--repo {repo}: not a clone of {package} (no {top}/ at HEAD)")
    return repo


def resolve(repo: Path, ref: str, package: str) -> str:
    """The commit a ref names: a commit, a branch, or a release's tag (``V``, ``vV``,
    ``package-V``); a PerflabError naming the ref if none is in the repository."""
    for name in (ref, f"v{ref}", f"{package}-{ref}"):
        try:
            return git(repo, "rev-parse", "--verify", "--quiet", f"{name}^{{commit}}").strip()
        except PerflabError:
            continue
    raise PerflabError(f"{ref!r} is not a commit or release tag in {repo}")


def commits_between(repo: Path, good: str, bad: str) -> list[Commit]:
    """``good`` then the first-parent commits after it up to ``bad``, oldest first (a merged
    PR is one commit, as the mainline saw it). Ends swapped or on unrelated lines: an error."""
    if good == bad:
        raise PerflabError(f"--range: both ends are the same commit {good[:10]}")
    try:
        git(repo, "merge-base", "--is-ancestor", good, bad)
    except PerflabError:
        raise PerflabError(
            f"--range {good[:10]}..{bad[:10]}: the first is not an ancestor of the second "
            "(ends swapped?)"
        ) from None
    out = git(repo, "log", "--first-parent", "--reverse", "--format=%H%x00%s", f"{good}..{bad}")
    commits = [Commit(*line.split("\0", 1)) for line in out.splitlines() if line]
    if not commits or commits[-1].sha != bad:
        raise PerflabError(f"--range: {bad[:10]} is not on the first-parent line from {good[:10]}")
    return [Commit(good, subject(repo, good)), *commits]


def subject(repo: Path, sha: str) -> str:
    return git(repo, "log", "-1", "--format=%s", sha).strip()


def tree(repo: Path, sha: str, cache_root: Path) -> Path:
    """The commit's files, extracted once into ``cache_root/sha`` by ``git archive`` (a
    commit's tree never changes, so the cache never goes stale)."""
    dest = cache_root / sha
    if (dest / ".complete").exists():
        return dest
    with build_dir(dest) as tmp:
        archive = tmp / ".archive.tar"
        git(repo, "archive", "--format=tar", "-o", str(archive), sha)
        with tarfile.open(archive) as tar:
            tar.extractall(tmp, filter="tar")
        archive.unlink()
    return dest
