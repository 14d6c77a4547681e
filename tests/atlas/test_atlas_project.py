"""The atlas's perflab.toml is read by the project file's loader: a bad key or value in its
[atlas] or [benchmark.NAME] tables is one line naming file:line, exit 2; `perflab config show`
reads an atlas directory's file like any project file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from atlasrepo import SCORE, make_repo, private_home  # noqa: F401
from click.testing import CliRunner

from perflab.atlas.define import init
from perflab.atlas.project import FILE, benchmark, load
from perflab.cli import main


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("atlas-project") / "repo"
    make_repo(root, n=3)
    return root


@pytest.fixture
def atlas_dir(repo: Path, tmp_path: Path) -> Path:
    d = tmp_path / "atlas"
    init(d, repo, "toyatlas", benchmark("score", SCORE, None, None, "us_per_task", runs=3))
    return d


def _line(text: str, needle: str) -> int:
    return next(i for i, ln in enumerate(text.splitlines(), 1) if ln.startswith(needle))


def test_the_written_file_reads_back_as_written(atlas_dir: Path, repo: Path) -> None:
    got = load(atlas_dir)
    assert got.repo == str(repo.resolve()) and got.package == "toyatlas"
    assert got.benchmarks["score"].command == SCORE and got.benchmarks["score"].runs == 3


@pytest.mark.parametrize(
    "old, new, says",
    [
        ('axis = "commits"', 'axis = "weekly"', "axis 'weekly' is not one of"),
        ('axis = "commits"', "axis = 7", "axis must be a str"),
        ("runs = 3", "runs = 'three'", "runs must be a int"),
        ("runs = 3", "range = 'a..b'", "range is not a key of an atlas benchmark"),
        ("every = 1", "evry = 1", "unknown key 'evry' in [atlas]"),
    ],
)
def test_a_bad_key_or_value_is_one_line_naming_its_line(
    atlas_dir: Path, old: str, new: str, says: str
) -> None:
    path = atlas_dir / FILE
    text = path.read_text().replace(old, new)
    path.write_text(text)
    res = CliRunner().invoke(main, ["atlas", "status", str(atlas_dir)])
    assert res.exit_code == 2, res.output
    assert res.stderr.count("\n") == 1 and says in res.stderr, res.stderr
    assert f"{path.resolve()}:{_line(text, new)}" in res.stderr, res.stderr


def test_config_show_reads_an_atlas_directory(
    atlas_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(atlas_dir)
    res = CliRunner().invoke(main, ["--benchmark", "score", "config", "show", "--json"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.output)
    assert out["benchmarks"] == ["score"]
    assert out["settings"]["command"]["value"] == SCORE
    assert out["settings"]["runs"]["source"].startswith(str((atlas_dir / FILE).resolve()) + ":")
