"""Private venvs' keys: a source tree's fingerprint (issue 43: a dangling symlink in it)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from perflab.prepare.venvs import tree_fingerprint, venv_key


def _tree(tmp_path: Path) -> Path:
    tree = tmp_path / "src"
    (tree / "pkg" / "sub").mkdir(parents=True)
    (tree / "pyproject.toml").write_text("[project]\nname = 'pkg'\n")
    (tree / "pkg" / "__init__.py").write_text("X = 1\n")
    return tree


def test_a_dangling_symlink_is_fingerprinted_by_its_link_text(tmp_path: Path) -> None:
    """Parsl's repository holds parsl/tests/sites/test_mpi/mpi_hello, a link to a file that is
    built only by its MPI test: comparing two checkouts stat'ed through it and crashed."""
    tree = _tree(tmp_path)
    before = tree_fingerprint(tree)
    (tree / "pkg" / "sub" / "mpi_hello").symlink_to("mpi_hello.c.out")  # leads nowhere
    with_link = tree_fingerprint(tree)
    assert with_link != before  # the link is part of the tree
    assert tree_fingerprint(tree) == with_link  # and counts the same each time
    (tree / "pkg" / "sub" / "mpi_hello").unlink()
    (tree / "pkg" / "sub" / "mpi_hello").symlink_to("elsewhere")
    assert tree_fingerprint(tree) not in (before, with_link)  # by its text
    (tree / "pkg" / "loop").symlink_to("loop")  # a link to itself: no stat through it either
    assert tree_fingerprint(tree)
    assert venv_key("/usr/bin/python3", "3.12.0", [str(tree)])  # compare --source-a reaches it


def test_a_link_that_leads_somewhere_counts_by_its_target(tmp_path: Path) -> None:
    tree = _tree(tmp_path)
    target = tree / "pkg" / "data.txt"
    target.write_text("one")
    (tree / "pkg" / "link.txt").symlink_to("data.txt")
    first = tree_fingerprint(tree)
    target.write_text("one more")  # the target changed: a fresh venv
    os.utime(target, ns=(1, 2))
    assert tree_fingerprint(tree) != first


def test_a_source_tree_of_the_engine_s_package_is_not_pinned_beside_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 39: a Parsl checkout declares 1.3.0-dev; pinning the parsl installed here beside
    it made pip fail (ResolutionImpossible). The tree that provides parsl is not pinned."""
    from perflab.prepare import venvs
    from perflab.spec import RunSpec

    checkout = tmp_path / "abc123"  # a git archive's folder: named by its sha, not "parsl"
    (checkout / "parsl").mkdir(parents=True)
    (checkout / "parsl" / "__init__.py").write_text("VERSION = '1.3.0-dev'\n")
    (checkout / "setup.py").write_text("from setuptools import setup\nsetup(name='parsl')\n")
    asked: list[list[str]] = []

    def fake(python: str | None, reqs: list[str], root: Path) -> venvs.Venv:
        asked.append(reqs)
        return venvs.Venv(root, root / "python", "3", tuple(reqs), {})

    monkeypatch.setattr(venvs, "ensure_venv", fake)
    monkeypatch.setattr(venvs, "caller_pins", lambda names: [f"{n}==9.9" for n in names])
    spec = RunSpec(target="parsl-htex", packages=[str(checkout)])
    venvs.in_venv(spec, tmp_path / "venvs")
    (reqs,) = asked
    assert str(checkout) in reqs and not any(r.startswith("parsl==") for r in reqs)
    assert venvs.provides(checkout, "parsl") and not venvs.provides(checkout, "dask")
