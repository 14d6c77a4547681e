"""Issue 51's renames: every old spelling still works for one release, with one deprecation
line on stderr each, and reaches the new option (the refusal below names the new one, or
the value the old one carried)."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import perflab
from perflab.cli.ranges import compare_sides, parse_range
from perflab.errors import PerflabError

# (command line with an old spelling, the old spellings in it with their new ones, what the
# one error line says: the value reached the option it now feeds)
CASES = [
    (["run", "--parsl-config", "/nonexistent/x.py", "-n", "1"],
     {"--parsl-config": "--engine-config"}, "/nonexistent/x.py: no such file"),
    (["campaign", "run", "nosuch", "--parsl-config", "/x.py"],
     {"--parsl-config": "--runner-config"}, "no campaign 'nosuch'"),
    (["compare", "--by", "speed"], {"--by": "--metric"}, "unknown metric 'speed' for --metric"),
    (["compare", "--threshold", "2"], {"--threshold": "--min-effect"},
     "--min-effect must be between 0 and 1"),
    (["compare", "--package-b", "parsl=!1"], {"--package-b": "--range"}, "'parsl=!1'"),
    (["history", "--versions", "1"], {"--versions": "--range"}, "at least two releases"),
    (["history", "--by", "speed", "--versions", "1,2"],
     {"--by": "--metric", "--versions": "--range"}, "unknown metric 'speed'"),
    (["bisect", "--good", "a", "--bad", "b"], {"--good": "--range", "--bad": "--range"},
     "commits need --repo"),
    (["explain", "--from", "1", "--to", "2", "--target", "nope"],
     {"--from": "--range", "--to": "--range"}, "unknown engine 'nope'"),
    (["zoo", "--threshold", "2", "--targets", "nope"], {"--threshold": "--efficiency"},
     "--efficiency in (0, 1)"),
    (["zoo", "--name", "z", "--targets", "nope"], {"--name": "positional"}, "unknown engine"),
    (["import", "nosuch.csv", "--campaign", "c"], {"--campaign": "positional"}, "nosuch.csv"),
    (["campaign", "create", "c", "--factors", "x", "--fastest", "--threshold", "2"],
     {"--threshold": "--min-effect"}, "--min-effect 2: a fraction"),
    (["run", "--repeat", "0", "-n", "1", "-t", "nope"], {"--repeat": "--runs"}, "'nope'"),
]  # fmt: skip


@pytest.mark.parametrize("args, renamed, says", CASES, ids=[" ".join(c[0][:3]) for c in CASES])
def test_an_old_spelling_works_and_says_so_once(
    tmp_path: Path, args: list[str], renamed: dict[str, str], says: str
) -> None:
    proc = perflab(*args, cwd=tmp_path, env={"PERFLAB_HOME": str(tmp_path / "home")})
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    lines = proc.stderr.strip().splitlines()
    said = [line for line in lines if line.startswith("deprecated:")]
    assert len(said) == len(renamed), lines
    for (old, new), line in zip(renamed.items(), said, strict=True):
        assert line.startswith(f"deprecated: {old} is now") and new in line, line
    errors = [line for line in lines if line not in said]
    assert len(errors) == 1 and errors[0].startswith("perflab: error:"), lines
    assert says in errors[0]
    assert "no such option" not in proc.stderr


def test_old_spellings_are_hidden_from_help() -> None:
    text = perflab("compare", "--help").stdout
    for old in ("--by", "--threshold", "--parsl-config", "--package-a", "--package-b"):
        assert old not in text
    for new in ("--range", "--metric", "--min-effect", "--engine-config", "--alpha"):
        assert new in text
    assert "0.05" in text.split("--alpha", 1)[1].split("\n  -", 1)[0]


@pytest.mark.parametrize(
    "text, lists, ends",
    [
        ("2024.1.1..2025.1.1", False, ["2024.1.1", "2025.1.1"]),
        ("v1.0..main", False, ["v1.0", "main"]),
        ("1,2,3", True, ["1", "2", "3"]),
        (" a .. b ", False, ["a", "b"]),
    ],
)
def test_range_is_parsed_in_one_place(text: str, lists: bool, ends: list[str]) -> None:
    assert parse_range(text, lists) == ends


BAD_RANGES = [("a", False), ("a..", False), ("a..a", False), ("a..b..c", False),
              ("1,2", False), ("1,", True)]  # fmt: skip


@pytest.mark.parametrize("text, lists", BAD_RANGES)
def test_a_bad_range_is_refused_naming_it(text: str, lists: bool) -> None:
    with pytest.raises(PerflabError, match="--range"):
        parse_range(text, lists)


def _sides(**given: object) -> dict[str, object]:
    o: dict[str, object] = {f"side_{k}_{s}": None for k in ("package", "source") for s in "ab"}
    o.update({"side_package": (), "ends": None, "repo": None, **given})
    compare_sides(o)
    return o


def test_compare_range_names_releases_of_the_package_or_two_folders(tmp_path: Path) -> None:
    o = _sides(ends="1.0..2.0", side_package=("dill", "numpy==2.0"))
    assert (o["side_package_a"], o["side_package_b"]) == (("dill==1.0",), ("dill==2.0",))
    assert o["side_package"] == ("numpy==2.0",)  # a pin stays on both sides
    assert _sides(ends="1.0..2.0")["side_package_b"] == ("parsl==2.0",)
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    o = _sides(ends=f"{tmp_path / 'a'}..{tmp_path / 'b'}")
    assert (o["side_source_a"], o["side_source_b"]) == (str(tmp_path / "a"), str(tmp_path / "b"))
    assert _sides(side_package=("parsl",))["side_package"] == ()  # a project file's name
    with pytest.raises(PerflabError, match="drop --package-b"):
        _sides(ends="1..2", side_package_b=("parsl==3",))
