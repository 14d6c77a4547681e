"""Properties of ``history`` fed failed runs (issue 43), drawn by hypothesis: 2-5 releases,
2-4 runs each, each run failed or measured (values from 1e-6 to 1e9, exact or noisy). Whatever
the draw: a release with no ok run has no level (no geometric mean, no interval) and is named
in ``absent`` with its cause; one with a single ok run keeps its value but no interval and is
named in ``too_few``; no change point names either; ``unanswered`` says so exactly when a
release is absent or too few; every reported number is finite and every interval holds its
estimate.

Examples: ``EXAMPLES`` (default profile; ``HYPOTHESIS_PROFILE=slow`` ten times more)."""

from __future__ import annotations

import math
from dataclasses import replace

import pytest
from hypothesis import given
from hypothesis import strategies as st
from sidefakes import unbuilt

from cliprops import examples, numbers_in
from perflab.compare import history
from perflab.prepare import Prepared
from perflab.run.record import RunRecord
from perflab.spec import RunSpec

#: Examples per property (each is one run_history: ~0.05 s, more with change points).
EXAMPLES = 40
CAUSE = "score: tasks_per_s nan is not a finite number"


@st.composite
def histories(draw: st.DrawFn) -> tuple[list[str], list[list[float | None]]]:
    """Releases and, per release, each run's value (None: the run failed)."""
    k = draw(st.integers(2, 5))
    runs = draw(st.integers(2, 4))
    scale = draw(st.sampled_from([1e-6, 1.0, 1e3, 1e9]))
    noisy = draw(st.booleans())
    pattern = draw(st.sampled_from(["all", "base", "one", "random", "none"]))
    out = []
    for i in range(k):
        level = scale * draw(st.sampled_from([1.0, 1.0, 2.0, 0.5]))
        vals: list[float | None] = [
            level * (1 + 0.02 * math.sin(7 * i + j) if noisy else 1.0) for j in range(runs)
        ]
        fails = {"all": True, "base": i == 0, "one": i == k // 2, "none": False}
        if pattern == "random":
            mask = draw(st.lists(st.booleans(), min_size=runs, max_size=runs))
            vals = [None if m else v for v, m in zip(vals, mask, strict=True)]
        elif fails[pattern]:
            vals = [None] * runs
        out.append(vals)
    return [f"1.{i}" for i in range(k)], out


@given(drawn=histories())
@examples(EXAMPLES)
def test_a_failed_run_never_becomes_a_level_or_a_change_point(
    drawn: tuple[list[str], list[list[float | None]]],
) -> None:
    versions, values = drawn
    queue = {v: list(vals) for v, vals in zip(versions, values, strict=True)}

    def measure(ready: Prepared) -> RunRecord:
        value = queue[ready.spec.packages[-1].split("==")[1]].pop(0)
        rec = RunRecord("r", "", "", "command", None, "ok")
        if value is None:
            return replace(rec, status="failed", error=f"Traceback\n{CAUSE}")
        return replace(rec, tasks_per_s=value)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(history, "measure", measure)
        hist = history.run_history(
            "toy",
            versions,
            RunSpec(metric="us_per_task", command="x"),
            len(values[0]),
            prepare=unbuilt,
        )
    out = hist.to_dict()
    ok = {v: sum(x is not None for x in vals) for v, vals in zip(versions, values, strict=True)}
    gone = {v for v, n in ok.items() if n == 0}
    short = {v for v, n in ok.items() if n == 1}  # a value, but too few for the gate
    assert {a.split(" ")[0] for a in out["absent"]} == gone
    assert {a.split(" ")[0] for a in out["too_few"]} == short
    assert all(CAUSE in a for a in out["absent"] + out["too_few"])
    for rel, vals in zip(out["releases"], values, strict=True):
        assert rel["values"] == [x for x in vals if x is not None]  # only what was measured
        assert rel["n"] + rel["failed"] == rel["runs"] == len(vals)
        if rel["version"] in gone:
            assert "geo_mean" not in rel and "ci_low" not in rel
        elif rel["version"] in short:  # its one value, and no interval of zero width
            assert rel["geo_mean"] == pytest.approx(rel["values"][0], rel=1e-9)
            assert "ci_low" not in rel
        else:
            assert rel["ci_low"] <= rel["geo_mean"] * (1 + 1e-9)
            assert rel["geo_mean"] <= rel["ci_high"] * (1 + 1e-9)
    for cp in out["change_points"]:
        assert not {cp["before"], cp["after"]} & (gone | short)
        d = cp["decision"]
        assert d["ci_low"] <= d["ratio"] * (1 + 1e-9) and d["ratio"] <= d["ci_high"] * (1 + 1e-9)
    assert (hist.unanswered() is not None) == bool(gone | short)
    assert all(math.isfinite(x) for x in numbers_in(out))
