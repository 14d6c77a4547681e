"""Git for the tests' synthetic repositories (tests/bisect/toyrepo.py, tests/atlas/atlasrepo.py):
fixed author, committer and dates, so a generated history's shas are the same on every run."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

ENV = {
    "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.org",
    "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.org",
    "GIT_AUTHOR_DATE": "2026-01-01T00:00:00", "GIT_COMMITTER_DATE": "2026-01-01T00:00:00",
}  # fmt: skip


def git(repo: Path, *args: str) -> str:
    """``git -C repo ARGS`` with the fixed identity and dates; its stdout."""
    env = {**os.environ, **ENV}
    return subprocess.run(
        ["git", "-C", str(repo), *args], capture_output=True, text=True, check=True, env=env
    ).stdout


def commit(repo: Path, subject: str) -> str:
    """Stage everything and commit it; the new commit's sha."""
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", subject)
    return git(repo, "rev-parse", "HEAD").strip()
