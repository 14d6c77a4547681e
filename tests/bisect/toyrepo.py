"""A synthetic truth: a git repository of a small pure-Python package whose one function's
cost is declared by each commit (``COST`` in ``toybis/core.py``), with planted slow commits."""

from __future__ import annotations

import re
from pathlib import Path

from gitrepo import commit, git

CORE = '''"""The one function whose cost the commits change."""

COST = {cost!r}


def work(n: int = 20000) -> float:
    """A loop of ``COST × n`` steps; the command's score."""
    total = 0.0
    for i in range(int(COST * n)):
        total += i % 7
    return COST * 1000.0
'''


def make_repo(
    root: Path,
    n: int = 41,
    planted: dict[int, float] | None = None,
    tags: dict[int, str] | None = None,
    numbered: bool = False,
) -> list[str]:
    """``n`` commits (commit 0 the good end); commit ``k`` in ``planted`` multiplies the cost
    by its factor. Subjects carry PR numbers (``… (#100+k)``); ``numbered``: each commit's
    ``toybis.core.COMMIT`` is ``k`` (a score can tell commits apart). Returns the shas, oldest
    first."""
    planted = {13: 1.10, 29: 1.20} if planted is None else planted
    root.mkdir(parents=True)
    git(root, "init", "-q", "-b", "main")
    (root / "toybis").mkdir()
    (root / "pyproject.toml").write_text(
        '[build-system]\nrequires = ["setuptools>=61"]\nbuild-backend = "setuptools.build_meta"\n'
        '[project]\nname = "toybis"\nversion = "1.3.0-dev"\n'
    )
    (root / "toybis" / "__init__.py").write_text("from toybis.core import work\n")
    cost, shas = 1.0, []
    for k in range(n):
        cost = round(cost * planted.get(k, 1.0), 6)
        number = f"\nCOMMIT = {k}\n" if numbered else ""
        (root / "toybis" / "core.py").write_text(CORE.format(cost=cost) + number)
        (root / "NOTES.txt").write_text(f"commit {k}\n")
        subject = "slow path" if k in planted else f"tidy {k}"
        shas.append(commit(root, f"{subject} (#{100 + k})"))
        if tags and k in tags:
            git(root, "tag", tags[k])
    return shas


def declared_cost(repo: Path, sha: str) -> float:
    """The cost a commit declares (what the simulated measurement measures)."""
    text = git(repo, "show", f"{sha}:toybis/core.py")
    m = re.search(r"^COST = ([0-9.]+)$", text, re.M)
    assert m
    return float(m.group(1))
