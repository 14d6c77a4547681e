"""``bisect --explain``: the culprit commit's hunk groups (explain's grouping), each reverted
alone through explain's transforms and measured against the culprit; the comparison itself is
faked here (the slow CLI test measures one for real)."""

from __future__ import annotations

import math
import shutil
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from toyrepo import make_repo

import perflab.bisect.onward as onward
from perflab.bisect.commits import tree
from perflab.bisect.driver import Settings, State
from perflab.compare.gate import Side
from perflab.prepare import prepare
from perflab.spec import RunSpec


def _fake_compare(seen: list[RunSpec], ratio: float) -> Any:
    def compare(a: Side, b: Side, settings: Settings, level: float, *_: Any, **__: Any) -> Any:
        seen.append(b.spec)
        a.values.extend([1.0] * 4)
        b.values.extend([ratio] * 4)
        d = SimpleNamespace(ratio=ratio, ci_low=ratio / 1.1, ci_high=ratio * 1.1, verdict="faster")
        return SimpleNamespace(failed=None, decision=d)

    return compare


def _clone(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[list[str], tuple[Path, Path]]:
    """A toy clone whose third commit slows ``COST`` 1.5x, and the trees of commits 2 and 3."""
    monkeypatch.setenv("PERFLAB_HOME", str(tmp_path / "home"))
    shas = make_repo(tmp_path / "clone", n=3, planted={2: 1.5})
    trees = (tree(tmp_path / "clone", shas[1], tmp_path / "t"),
             tree(tmp_path / "clone", shas[2], tmp_path / "t"))  # fmt: skip
    return shas, trees


def test_each_group_is_reverted_measured_kept_and_reused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shas, trees = _clone(tmp_path, monkeypatch)
    spec_b = RunSpec(metric="us_per_task", command="true", sources={"toybis": str(trees[1])})
    seen: list[RunSpec] = []
    monkeypatch.setattr(onward, "compare_points", _fake_compare(seen, 1 / 1.5))
    culprit = {"key": shas[2], "step": {"ratio": 1.5}}
    state = State(tmp_path / "state.json")
    args = (culprit, prepare(spec_b), trees, "toybis", Settings("us_per_task"), state, prepare)
    (g,) = onward.measure_hunks(*args)
    assert g["units"] == ["toybis.core:COST"] and g["level"] == pytest.approx(0.05)
    assert g["share"] == pytest.approx(1.0) and g["share_low"] < 1 < g["share_high"]
    assert g["runs"] == 8 and g["verdict"] == "faster"
    (reverted,) = seen  # the culprit with COST as the commit before had it
    core = prepare(reverted).trees[0] / "toybis" / "core.py"
    assert "COST = 1.0\n" in core.read_text()
    assert "COST = 1.0\n" not in (trees[1] / "toybis" / "core.py").read_text()
    (again,) = onward.measure_hunks(*args)
    assert again == g and len(seen) == 1 and state.reused == 1
    text = "\n".join(onward.hunk_lines([g]))
    assert "reverted: 0.667× (0.606–0.733), faster; share of the culprit's step 100%" in text


def test_a_revert_that_does_not_apply_is_named_and_no_run_is_made(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shas, trees = _clone(tmp_path, monkeypatch)
    seen: list[RunSpec] = []
    monkeypatch.setattr(onward, "compare_points", _fake_compare(seen, 1.0))
    # B's spec runs a tree whose core has no COST left to set back
    other = tmp_path / "other"
    shutil.copytree(trees[1], other)
    (other / "toybis" / "core.py").write_text(
        "RATE = 2\n\n\ndef work() -> float:\n    return 1.0\n"
    )
    spec_b = RunSpec(metric="us_per_task", command="true", sources={"toybis": str(other)})
    (g,) = onward.measure_hunks({"key": shas[2], "step": {"ratio": 1.5}}, prepare(spec_b),
                                trees, "toybis", Settings("us_per_task"),
                                State(tmp_path / "s.json"), prepare)  # fmt: skip
    assert not seen and "revert does not apply" in g["not_measured"] and "share" not in g
    assert "not measured: the revert does not apply" in "\n".join(onward.hunk_lines([g]))
    assert math.isfinite(g["level"])
