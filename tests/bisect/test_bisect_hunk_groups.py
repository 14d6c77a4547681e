"""``bisect --explain --hunk-groups N``: the N largest hunk groups of a culprit are measured,
the rest listed and said to be not measured (text and JSON); bad values are bad input. The
comparisons are faked (test_bisect_hunks.py's slow sibling measures one for real)."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from click.testing import CliRunner

import perflab.bisect.onward as onward
from perflab.bisect.driver import MOST_MEASURED, Settings, State
from perflab.cli import main
from perflab.compare.gate import Side
from perflab.prepare import prepare
from perflab.spec import RunSpec

#: Three functions; the culprit changes each, ``big`` most and ``small`` least, so the
#: groups come largest first: big, mid, small.
BEFORE = """def big():
    return 1


def mid():
    return 1


def small():
    return 1
"""
AFTER = """def big():
    a = 1
    b = 2
    c = 3
    d = 4
    return a + b + c + d


def mid():
    a = 1
    b = 2
    return a + b


def small():
    return 2
"""


def _trees(root: Path) -> tuple[Path, Path]:
    trees = []
    for name, core in (("before", BEFORE), ("after", AFTER)):
        pkg = root / name / "toyhg"
        pkg.mkdir(parents=True)
        (pkg / "__init__.py").write_text("")
        (pkg / "core.py").write_text(core)
        trees.append(root / name)
    return trees[0], trees[1]


def _fake_compare(seen: list[RunSpec]) -> Any:
    def compare(a: Side, b: Side, settings: Settings, level: float, *_: Any, **__: Any) -> Any:
        seen.append(b.spec)
        a.values.extend([1.0] * 3)
        b.values.extend([0.9] * 3)
        d = SimpleNamespace(ratio=0.9, ci_low=0.85, ci_high=0.95, verdict="faster")
        return SimpleNamespace(failed=None, decision=d)

    return compare


@pytest.mark.parametrize("most", [0, 1, 2, 3])
def test_only_the_n_largest_groups_are_measured_the_rest_listed_as_such(
    most: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PERFLAB_HOME", str(tmp_path / "home"))
    trees = _trees(tmp_path)
    seen: list[RunSpec] = []
    monkeypatch.setattr(onward, "compare_points", _fake_compare(seen))
    ready = prepare(RunSpec(metric="us_per_task", command="true", sources={"toyhg": str(trees[1])}))
    culprit = {"key": "c" * 40, "step": {"ratio": 1.2}}
    groups = onward.measure_hunks(culprit, ready, trees, "toyhg", Settings("us_per_task"),
                                  State(tmp_path / "s.json"), prepare, None, most)  # fmt: skip
    assert [g["units"] for g in groups] == [["toyhg.core:big"], ["toyhg.core:mid"],
                                            ["toyhg.core:small"]]  # fmt: skip
    assert len(seen) == most  # one comparison per measured group, none for the rest
    for g in groups[:most]:
        assert "ratio" in g and not g.get("listed_only")
        assert g["level"] == pytest.approx(0.05 / most)  # Bonferroni over the measured only
    for g in groups[most:]:
        assert g["listed_only"] is True and "ratio" not in g and "level" not in g
        assert g["not_measured"].startswith("listed, not measured")
    text = "\n".join(onward.hunk_lines(groups))
    assert text.count("listed, not measured (beyond --hunk-groups)") == 3 - most
    assert text.count("reverted: 0.900×") == most
    head = text.splitlines()[0]
    if most < 3:
        assert head.endswith(f"; {3 - most} listed, not measured (--hunk-groups)):")
    assert ("screen would revert" in head) is False


def test_the_default_measures_six_and_every_measured_group_is_shown() -> None:
    assert MOST_MEASURED == 6
    measured = [{"factor": f"g{i}", "units": [f"m:f{i}"], "lines": 9 - i, "why": "",
                 "ratio": 0.9, "low": 0.8, "high": 1.0, "verdict": "faster", "share": 0.5,
                 "share_low": 0.1, "share_high": 0.9, "runs": 8, "level": 0.005}
                for i in range(10)]  # fmt: skip
    listed = [{"factor": "g10", "units": ["m:f10"], "lines": 1, "why": "",
               "listed_only": True, "not_measured": "listed, not measured: …"}]  # fmt: skip
    text = onward.hunk_lines(measured + listed)
    assert text[0].startswith("hunks (11 groups; the 10 largest each reverted alone")
    assert sum("reverted:" in ln for ln in text) == 10  # more than the 8 shown by default
    assert text[-1] == "  … and 1 more, listed, not measured (see --json)"


@pytest.mark.parametrize("extra", [["--hunk-groups", "2"], ["--hunk-groups", "-1", "--explain"]])
def test_a_bad_hunk_groups_is_one_line_exit_2(extra: list[str], tmp_path: Path) -> None:
    home = tmp_path / "home"
    res = CliRunner().invoke(
        main,
        ["bisect", "--package", "toyhg", "--range", "1.0..1.1", "--command",
         "echo 1", "--metric", "us_per_task", *extra],
        env={"PERFLAB_HOME": str(home)},
    )  # fmt: skip
    assert res.exit_code == 2, res.output
    assert res.stderr.count("\n") == 1 and "--hunk-groups" in res.stderr, res.stderr
    assert not (home / "bisect").exists()
