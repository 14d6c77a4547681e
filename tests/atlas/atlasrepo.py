"""A synthetic truth for the atlas: a git repository of a small package whose cost each
commit declares (``COST`` in ``toyatlas/core.py``), with planted steps, a commit that does not
build (its package has no ``__init__.py``), and more commits appended later."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from gitrepo import commit, git

CORE = '''"""The one function whose cost the commits change."""

COST = {cost!r}


def work() -> float:
    """The command's score: the declared cost."""
    return COST * 1000.0
'''
#: Commit → factor: a regression at 15 fixed at 19, a regression at 40; appended: 70.
PLANTED = {15: 1.3, 19: 1 / 1.3, 40: 1.25}
APPENDED = {70: 1.3}
BROKEN = 30
#: The command: its printed score is the declared cost with 1 % noise.
SCORE = (
    'python -c "import random, toyatlas; '
    'print(toyatlas.core.COST * 1000 * (1 + random.gauss(0, 0.01)))"'
)


def _cost(repo: Path) -> float:
    m = re.search(r"^COST = ([0-9.]+)$", (repo / "toyatlas" / "core.py").read_text(), re.M)
    assert m
    return float(m.group(1))


def grow(root: Path, start: int, stop: int, planted: dict[int, float],
         broken: int | None = BROKEN) -> list[str]:  # fmt: skip
    """Commits ``start`` … ``stop − 1`` on the repository; their shas, oldest first."""
    shas = []
    for k in range(start, stop):
        cost = round(_cost(root) * planted.get(k, 1.0), 6) if k else 1.0
        (root / "toyatlas").mkdir(exist_ok=True)
        (root / "toyatlas" / "core.py").write_text(CORE.format(cost=cost))
        init = root / "toyatlas" / "__init__.py"
        if k == broken:
            init.unlink(missing_ok=True)
        else:
            init.write_text("from toyatlas import core\nfrom toyatlas.core import work\n")
        (root / "NOTES.txt").write_text(f"commit {k}\n")
        factor = planted.get(k, 1.0)
        subject = "slow path" if factor > 1 else "fast path" if factor < 1 else f"tidy {k}"
        shas.append(commit(root, f"{subject} (#{100 + k})"))
    return shas


def make_repo(root: Path, n: int = 60) -> list[str]:
    """``n`` commits with ``PLANTED`` steps and commit ``BROKEN`` unbuildable."""
    root.mkdir(parents=True)
    git(root, "init", "-q", "-b", "main")
    (root / "pyproject.toml").write_text('[project]\nname = "toyatlas"\nversion = "0.1"\n')
    return grow(root, 0, n, PLANTED)


def declared(repo: Path, sha: str) -> float:
    """The cost commit ``sha`` declares."""
    m = re.search(r"^COST = ([0-9.]+)$", git(repo, "show", f"{sha}:toyatlas/core.py"), re.M)
    assert m
    return float(m.group(1))


@pytest.fixture(autouse=True)
def private_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A private perflab home per test (the trees' cache, run directories)."""
    home = tmp_path / "home"
    monkeypatch.setenv("PERFLAB_HOME", str(home))
    return home
