"""A commit whose tree holds a link that leads nowhere (Parsl's
parsl/tests/sites/test_mpi/mpi_hello) is prepared and measured: the link is skipped from the
run's copy of the package and hashed by its own text, never followed."""

from __future__ import annotations

from pathlib import Path

from atlasrepo import SCORE, make_repo, private_home  # noqa: F401

from gitrepo import commit
from perflab.atlas.measure import RealMeasurer
from perflab.atlas.project import benchmark
from perflab.factors.sources import tree_package


def _dangling(repo: Path) -> str:
    """One more commit on ``repo`` adding two links to nowhere inside the package."""
    sub = repo / "toyatlas" / "sites" / "test_mpi"
    sub.mkdir(parents=True)
    (sub / "mpi_hello").symlink_to("mpi_test/mpi_hello")
    (sub / "gone.py").symlink_to("nowhere.py")
    return commit(repo, "tests: an MPI hello (#999)")


def test_a_commit_with_a_dangling_symlink_is_prepared_and_measured(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    make_repo(repo, n=2)
    sha = _dangling(repo)
    m = RealMeasurer(repo, "toyatlas", "tree")
    bench = benchmark("score", SCORE, None, None, "us_per_task", runs=1)
    prepared = m.prepared(bench, sha)
    copies = [Path(t["tree"]) for t in prepared.transformed]
    assert copies and all((c / "toyatlas" / "core.py").is_file() for c in copies)
    assert not any((c / "toyatlas" / "sites" / "test_mpi" / "mpi_hello").is_symlink()
                   for c in copies)  # fmt: skip
    assert m.run(bench, sha) > 0


def test_a_dangling_link_changes_the_tree_version_by_its_text(tmp_path: Path) -> None:
    tree = tmp_path / "t"
    (tree / "pkg").mkdir(parents=True)
    (tree / "pkg" / "__init__.py").write_text("")
    (tree / "pkg" / "gone.py").symlink_to("nowhere.py")
    _, first = tree_package(tree, "pkg")
    (tree / "pkg" / "gone.py").unlink()
    (tree / "pkg" / "gone.py").symlink_to("elsewhere.py")
    assert tree_package(tree, "pkg")[1] != first
