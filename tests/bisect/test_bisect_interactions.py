"""``bisect --explain`` measures a culprit's hunk groups together (a factorial), so two hunks
that cost nothing alone and +20 % together are found as an interaction. The planted truth: a
culprit commit sets ``A = 1`` and ``B = 1`` (two hunk groups), and the cost is
``1 + 0.2 · A · B``. Reverting either alone undoes the whole step, so the one-at-a-time
reverts give each group a share of ~100 % (200 % in all) and say nothing of the interaction;
together, each group alone is ~0 %, the interaction ~100 %, the shares (interactions split
evenly) ~50 % each. The runs are simulated from the cell's prepared tree (real transforms
through ``prepare``), with seeded log-normal noise."""

from __future__ import annotations

import math
import re
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

import perflab.bisect.onward as onward
import perflab.bisect.together as together
from perflab.bisect import factorial as fx
from perflab.bisect.driver import Settings, State
from perflab.compare.gate import Side
from perflab.prepare import Prepared, prepare
from perflab.spec import RunSpec

CORE = '"""Two switches whose cost shows only together."""\n\nA = {a}\nB = {b}\n'
SD = 0.02


def _trees(root: Path) -> tuple[Path, Path]:
    out = []
    for name, v in (("before", 0), ("after", 1)):
        pkg = root / name / "toyia"
        pkg.mkdir(parents=True)
        (pkg / "__init__.py").write_text("")
        (pkg / "core.py").write_text(CORE.format(a=v, b=v))
        out.append(root / name)
    return out[0], out[1]


def _switches(spec: RunSpec, ready: Prepared | None = None) -> tuple[int, int]:
    """A and B as the cell's tree has them (its transformed copy, else its source)."""
    roots = [*(ready.trees if ready else []), Path(spec.sources["toyia"])]
    core = next(r / "toyia" / "core.py" for r in roots if (r / "toyia" / "core.py").exists())
    text = core.read_text()
    a, b = (re.search(rf"^{k} = (\d)$", text, re.M) for k in "AB")
    assert a and b
    return int(a.group(1)), int(b.group(1))


def _cost(a: int, b: int, rng: np.random.Generator) -> float:
    return (1.0 + 0.2 * a * b) * math.exp(rng.normal(0, SD))


def _setup(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Any, ...]:
    monkeypatch.setenv("PERFLAB_HOME", str(tmp_path / "home"))
    trees = _trees(tmp_path)
    ready = prepare(RunSpec(metric="us_per_task", command="true", sources={"toyia": str(trees[1])}))
    culprit = {"key": "c" * 40, "step": {"ratio": 1.2}}
    return trees, ready, culprit


def _covers(low: float, high: float, truth: float) -> bool:
    """The truth within the interval widened by its half-width on each side (as
    test_bisect_cli's: a 95 % interval alone misses one run in 20)."""
    half = (high - low) / 2
    return low - half <= truth <= high + half


def test_one_at_a_time_gives_each_group_the_whole_step_and_no_interaction(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    trees, ready, culprit = _setup(tmp_path, monkeypatch)
    rng = np.random.default_rng(0)

    def compare(a: Side, b: Side, *_: Any, **__: Any) -> Any:
        a.values.extend(_cost(1, 1, rng) for _ in range(8))
        b.values.extend(_cost(*_switches(b.spec, b.prepared), rng) for _ in range(8))
        logs = np.log(b.values) - np.log(a.values)
        m, h = float(logs.mean()), 3 * float(logs.std(ddof=1)) / math.sqrt(8)
        d = SimpleNamespace(ratio=math.exp(m), ci_low=math.exp(m - h), ci_high=math.exp(m + h),
                            verdict="faster")  # fmt: skip
        return SimpleNamespace(failed=None, decision=d)

    monkeypatch.setattr(onward, "compare_points", compare)
    groups = onward.measure_hunks(culprit, ready, trees, "toyia", Settings("us_per_task"),
                                  State(tmp_path / "s.json"), prepare)  # fmt: skip
    assert len(groups) == 2 and all(g["units"][0].startswith("toyia.core:") for g in groups)
    for g in groups:  # each revert alone undoes the whole step: the interaction is missed
        assert _covers(g["share_low"], g["share_high"], 1.0) and g["share_low"] > 0.5
        assert "alone_share" not in g


@pytest.mark.parametrize("seed", range(5))
def test_together_finds_the_interaction_and_each_group_alone_costs_nothing(
    seed: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    trees, ready, culprit = _setup(tmp_path, monkeypatch)
    rng = np.random.default_rng(seed)
    calls: list[tuple[int, int]] = []

    def run(cell: Prepared, metric: str) -> float:
        calls.append(_switches(cell.spec, cell))
        return _cost(*calls[-1], rng)

    monkeypatch.setattr(together, "run_one", run)
    state = State(tmp_path / "s.json")
    args = (culprit, ready, trees, "toyia", Settings("us_per_task"), state, prepare)
    got = onward.explain_culprit(*args)
    d = got["hunk_design"]
    n = d["replicates"]
    assert d["design"] == "full 2^2 factorial" and d["cells"] == 4 and d["most_replicates"] == 10
    # each group's share (50 %) is decided long before the most replicates
    assert n < 10 and d["stopped"] == "every group decided or negligible"
    assert d["runs"] == len(calls) == 4 * n and d["failed_runs"] == 0
    assert sorted(set(calls)) == [(0, 0), (0, 1), (1, 0), (1, 1)]  # every cell as planted
    look = fx.look_levels(10, 0.05)[n]
    assert d["level"] == pytest.approx(look / 3)  # two shares and one interaction
    g1, g2 = got["hunk_groups"]
    (it,) = got["hunk_interactions"]
    assert it["groups"] == [g1["factor"], g2["factor"]] and it["verdict"] == "slower"
    # shown, and as wide as the look that stopped the runs leaves it (the groups' shares,
    # not the interactions, hold the runs up)
    assert it["share_low"] > 0 and _covers(it["share_low"], it["share_high"], 1.0)
    assert _covers(it["low"], it["high"], 1.2)
    for g in (g1, g2):
        assert _covers(g["alone_low"], g["alone_high"], 0.0)  # alone on the commit before
        assert _covers(g["share_low"], g["share_high"], 0.5)  # the interaction split evenly
        assert _covers(g["low"], g["high"], 1 / 1.2) and g["verdict"] == "faster"
    assert _covers(d["total"]["share_low"], d["total"]["share_high"], 1.0)
    text = "\n".join(onward.hunk_lines(got["hunk_groups"], 8, d, got["hunk_interactions"]))
    assert (f"the 2 largest measured together: full 2^2 factorial, 4 cells × {n} replicates "
            f"= {4 * n} runs (stopped: every group decided or negligible, 10 replicates at "
            "most)") in text  # fmt: skip
    assert f"interaction {g1['factor']} × {g2['factor']}: {it['ratio']:.3f}× (" in text
    assert "alone on the commit before" in text and "aliased only with" in text
    again = onward.explain_culprit(*args)  # every run kept: none made again
    assert again == got and len(calls) == 4 * n and state.reused == 1


def test_cells_lost_to_failed_runs_leave_their_terms_unassessable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    trees, ready, culprit = _setup(tmp_path, monkeypatch)
    rng = np.random.default_rng(0)

    def run(cell: Prepared, metric: str) -> float | None:
        ab = _switches(cell.spec, cell)
        return None if ab == (0, 0) else _cost(*ab, rng)  # both reverted: never runs

    monkeypatch.setattr(together, "run_one", run)
    got = onward.explain_culprit(culprit, ready, trees, "toyia", Settings("us_per_task"),
                                 State(tmp_path / "s.json"), prepare)  # fmt: skip
    assert got["hunk_design"]["failed_runs"] == 10
    (it,) = got["hunk_interactions"]
    assert it["not_measured"].startswith("unassessable") and "ratio" not in it
    assert all(g["not_measured"].startswith("unassessable") for g in got["hunk_groups"])


@pytest.mark.parametrize("k", range(1, fx.MOST_GROUPS + 1))
def test_every_design_estimates_every_group_and_two_way_interaction(k: int) -> None:
    d = fx.design(k)
    assert d is not None and len(d) == {5: 16, 6: 32, 7: 64, 8: 64}.get(k, 2**k)
    x = np.array([[1.0, *(np.prod([c[i] for i in t]) for t in fx.terms(k))] for c in d])
    assert np.linalg.matrix_rank(x) == x.shape[1]  # resolution V or more: all estimable
    assert fx.design(fx.MOST_GROUPS + 1) is None


def test_more_groups_than_a_fraction_holds_are_measured_one_at_a_time_and_said_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PERFLAB_HOME", str(tmp_path / "home"))
    k = fx.MOST_GROUPS + 1
    trees = []
    for name, v in (("before", 0), ("after", 1)):
        pkg = tmp_path / name / "toymany"
        pkg.mkdir(parents=True)
        (pkg / "__init__.py").write_text("")
        (pkg / "core.py").write_text("".join(f"C{i} = {v}\n" for i in range(k)))
        trees.append(tmp_path / name)
    seen: list[RunSpec] = []

    def compare(a: Side, b: Side, *_: Any, **__: Any) -> Any:
        seen.append(b.spec)
        a.values.extend([1.0] * 3)
        b.values.extend([0.9] * 3)
        d = SimpleNamespace(ratio=0.9, ci_low=0.85, ci_high=0.95, verdict="faster")
        return SimpleNamespace(failed=None, decision=d)

    monkeypatch.setattr(onward, "compare_points", compare)
    ready = prepare(
        RunSpec(metric="us_per_task", command="true", sources={"toymany": str(trees[1])})
    )
    got = onward.explain_culprit({"key": "d" * 40, "step": {"ratio": 1.2}}, ready,
                                 (trees[0], trees[1]), "toymany", Settings("us_per_task"),
                                 State(tmp_path / "s.json"), prepare, None, k)  # fmt: skip
    assert len(seen) == k and got["hunk_interactions"] == []
    assert got["hunk_design"]["design"] == "one at a time"
    assert "interactions unassessable" in got["hunk_design"]["why"]
    assert all(g["level"] == pytest.approx(0.05 / k) for g in got["hunk_groups"])
    text = onward.hunk_lines(got["hunk_groups"], 8, got["hunk_design"], [])
    assert text[-1].strip() == got["hunk_design"]["why"]


def test_with_precision_each_revert_is_a_planned_comparison_and_said_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    trees, ready, culprit = _setup(tmp_path, monkeypatch)
    seen: list[float] = []

    def compare(a: Side, b: Side, settings: Settings, level: float, *_: Any, **__: Any) -> Any:
        seen.append(level)
        d = SimpleNamespace(ratio=0.85, ci_low=0.8, ci_high=0.9, verdict="faster")
        a.values.extend([1.0] * 3)
        b.values.extend([0.85] * 3)
        return SimpleNamespace(failed=None, decision=d)

    monkeypatch.setattr(onward, "compare_points", compare)
    got = onward.explain_culprit(culprit, ready, trees, "toyia",
                                 Settings("us_per_task", precision=0.03),
                                 State(tmp_path / "s.json"), prepare)  # fmt: skip
    assert seen == [pytest.approx(0.025)] * 2 and got["hunk_interactions"] == []
    assert "--precision" in got["hunk_design"]["why"]
