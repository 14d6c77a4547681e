"""Releases between two ends, a release's tag in a clone, and a subject's PR number."""

from __future__ import annotations

from pathlib import Path

import pytest
from toyrepo import make_repo

from perflab.bisect.commits import Commit, check_clone, resolve, tree
from perflab.bisect.releases import as_version, between, release_tag
from perflab.errors import PerflabError

LISTED = ["2025.11.24", "2025.12.1", "2026.1.5rc1", "2026.1.5", "2026.6.1", "2026.7.1"]


def test_the_releases_between_the_ends_oldest_first() -> None:
    assert between(LISTED, "2025.12.1", "2026.6.1") == ["2025.12.1", "2026.1.5", "2026.6.1"]
    assert between(LISTED, "2025.12.01", "2026.06.1")[0] == "2025.12.1"  # tags' spelling
    with pytest.raises(PerflabError, match="ends swapped"):
        between(LISTED, "2026.6.1", "2025.12.1")
    with pytest.raises(PerflabError, match="not a release the package index lists"):
        between(LISTED, "2025.12.2", "2026.6.1")


def test_a_release_maps_to_its_tag_and_a_tree_is_extracted_once(tmp_path: Path) -> None:
    shas = make_repo(tmp_path / "clone", n=4, planted={}, tags={1: "2025.12.01", 3: "v2026.6.1"})
    repo = check_clone(tmp_path / "clone", "toybis")
    assert release_tag(repo, "2025.12.1") == "2025.12.01"
    assert release_tag(repo, "2026.6.1") == "v2026.6.1" and release_tag(repo, "1.0") is None
    assert resolve(repo, "2026.6.1", "toybis") == shas[3]
    assert as_version("parsl-2026.6.1") == as_version("2026.6.1") and as_version("main") is None
    t = tree(repo, shas[1], tmp_path / "trees")
    assert (t / "toybis" / "core.py").is_file() and (t / ".complete").exists()
    assert tree(repo, shas[1], tmp_path / "trees") == t


def test_a_subject_s_pr_number() -> None:
    assert Commit("a" * 40, "HTEX: fewer wakeups (#4047)").pr == 4047
    assert Commit("a" * 40, "Merge pull request #131 from x/y").pr == 131
    assert Commit("a" * 40, "tidy").pr is None
