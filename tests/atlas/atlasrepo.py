"""A synthetic truth for the atlas: a git repository of a small package whose cost each
commit declares (``COST`` in ``toyatlas/core.py``), with planted steps, a commit that does not
build (its package has no ``__init__.py``), and more commits appended later."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

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


def make_atlas(tmp_path: Path) -> tuple[Path, Path, list[str]]:
    """The repository of ``make_repo`` under ``tmp_path``, and an atlas watching it with one
    benchmark, ``score`` (the command ``SCORE``): (repo, atlas dir, shas)."""
    from perflab.atlas.define import init
    from perflab.atlas.project import benchmark

    repo = tmp_path / "repo"
    shas = make_repo(repo)
    d = tmp_path / "atlas"
    init(d, repo, "toyatlas", benchmark("score", SCORE, None, None, "us_per_task"))
    return repo, d, shas


def declared(repo: Path, sha: str) -> float:
    """The cost commit ``sha`` declares."""
    m = re.search(r"^COST = ([0-9.]+)$", git(repo, "show", f"{sha}:toyatlas/core.py"), re.M)
    assert m
    return float(m.group(1))


def simulated(repo: Path, shas: list[str], seed: int) -> Any:
    """Simulated runs of the repository's commits at their declared costs (``BROKEN`` does
    not build): ``atlas.measure.Simulated``."""
    from perflab.atlas.measure import Simulated

    cache: dict[str, float] = {}

    def cost(key: str) -> float:
        if key not in cache:
            cache[key] = declared(repo, key)
        return cache[key]

    return Simulated(cost, seed=seed, broken=frozenset({shas[BROKEN]}))


def reverted_cost(repo: Path) -> Any:
    """A reverted hunk group's true cost: its ``set_constant`` of COST, else the commit's."""

    def cost(key: str, transforms: list[dict[str, Any]]) -> float:
        consts = [t["expr"] for t in transforms
                  if t["op"] == "set_constant" and t["name"] == "COST"]  # fmt: skip
        return float(consts[-1]) if consts else declared(repo, key)

    return cost


@pytest.fixture(autouse=True)
def private_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A private perflab home per test (the trees' cache, run directories)."""
    home = tmp_path / "home"
    monkeypatch.setenv("PERFLAB_HOME", str(home))
    return home
