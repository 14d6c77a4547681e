"""Private venvs' keys: a source tree's fingerprint (issue 43: a dangling symlink in it)."""

from __future__ import annotations

import os
from pathlib import Path

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
