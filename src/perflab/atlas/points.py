"""The atlas's axis from a clone, read only: the first-parent commits since ``since`` (or
from the root), and which of them carry a release tag. On the ``commits`` axis every
``every``-th commit (and the newest) is measured; on ``releases`` the tagged ones (and the
newest); ``both`` measures the union. Bisection later measures the commits between."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from perflab.bisect.commits import PR_RE, git
from perflab.bisect.releases import as_version


def tags(repo: Path) -> dict[str, str]:
    """Commit sha → the release tag on it (the highest version when several)."""
    out: dict[str, str] = {}
    lines = git(repo, "for-each-ref", "--format=%(refname:short)%00%(objectname)%00%(*objectname)",
                "refs/tags").splitlines()  # fmt: skip
    for line in lines:
        name, obj, peeled = line.split("\0")
        if as_version(name) is None:
            continue
        sha = peeled or obj
        if sha not in out or as_version(out[sha]) < as_version(name):  # type: ignore[operator]
            out[sha] = name
    return out


def history(repo: Path, since: str | None, head: str = "HEAD") -> list[tuple[str, str]]:
    """(sha, subject) of the first-parent commits from ``since`` (included) to ``head``,
    oldest first."""
    rng = [f"{since}..{head}"] if since else [head]
    out = git(repo, "log", "--first-parent", "--reverse", "--format=%H%x00%s", *rng)
    rows = [tuple(line.split("\0", 1)) for line in out.splitlines() if line]
    if since:
        first = git(repo, "log", "-1", "--format=%H%x00%s", since).strip().split("\0", 1)
        rows.insert(0, tuple(first))
    return [(r[0], r[1]) for r in rows]


def axis_points(
    repo: Path, since: str | None, axis: str, every: int, until: str | None = None
) -> list[dict[str, Any]]:
    """Every first-parent commit as a point row; ``on_axis`` marks those the series measures."""
    rows = history(repo, since, until or "HEAD")
    tagged = tags(repo)
    out = []
    for i, (sha, subject) in enumerate(rows):
        newest = i == len(rows) - 1
        on_commits = axis in ("commits", "both") and (i % max(1, every) == 0 or newest)
        on_releases = axis in ("releases", "both") and (sha in tagged or newest or i == 0)
        m = PR_RE.search(subject)
        out.append({
            "key": sha, "label": sha[:10], "subject": subject,
            "pr": int(m.group(1) or m.group(2)) if m else None,
            "release": tagged.get(sha), "on_axis": on_commits or on_releases,
        })  # fmt: skip
    return out
