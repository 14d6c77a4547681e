"""Properties of the zoo's scoreboard fed failed runs (issue 43), drawn by hypothesis: 1-3
engines, METG levels and DAG patterns, 1-3 replicates, each run failed or measured. Whatever
the draw: a measurement none of whose runs succeeded has no figure and is in ``absent`` with
its cause; no figure is made of a failed run; ``unanswered`` says so exactly when something
is absent; every number is finite and every interval holds its estimate.

Examples: ``EXAMPLES`` (default profile; ``HYPOTHESIS_PROFILE=slow`` ten times more)."""

from __future__ import annotations

import math

import pandas as pd
from hypothesis import given
from hypothesis import strategies as st

from cliprops import examples, numbers_in
from perflab.analysis.zoo import rows_for_table, unanswered, zoo_table
from perflab.zoo.frame import COLUMNS

#: Examples per property (one zoo_table: ~0.1 s, several on a loaded machine).
EXAMPLES = 20
CAUSE = "RuntimeError: the engine did not start"
LEVELS = [2000.0, 200.0, 20.0]


@st.composite
def zoos(draw: st.DrawFn) -> pd.DataFrame:
    """A zoo's runs: every (engine, kind, size) x replicates, each failed or measured."""
    engines = [f"e{i}" for i in range(draw(st.integers(1, 3)))]
    kinds = draw(st.lists(st.sampled_from(["metg", "chain", "fan"]), min_size=1, unique=True))
    reps = draw(st.integers(1, 3))
    pattern = draw(st.sampled_from(["all", "engine", "level", "random", "none"]))
    rows = []
    for t in engines:
        for kind in kinds:
            for us in LEVELS if kind == "metg" else [0.0]:
                for r in range(reps):
                    failed = {"all": True, "engine": t == "e0", "none": False,
                              "level": us == 200.0}.get(pattern)  # fmt: skip
                    if failed is None:
                        failed = draw(st.booleans())
                    eff = (us or 1000.0) / ((us or 1000.0) + 50.0) * (1 + 0.01 * r)
                    wall = 0.1 / eff
                    rows.append({
                        "run_id": f"{t}{kind}{us}{r}", "target": t, "kind": kind,
                        "workload": "compute" if kind == "metg" else kind, "task_us": us,
                        "tasks": 100, "wall_s": None if failed else wall,
                        "ideal_s": None if failed else 0.1, "efficiency": None if failed else eff,
                        "tasks_per_s": None if failed else 100 / wall, "slots": 2,
                        "latency_per_level_s": None if failed else 1e-3 * (1 + r),
                        "status": "failed" if failed else "ok",
                        "error": CAUSE if failed else None,
                    })  # fmt: skip
    return pd.DataFrame(rows).reindex(columns=COLUMNS)


def _intervals(obj: object) -> list[dict]:
    """Every {estimate, ci_low, ci_high} summary in the table."""
    if isinstance(obj, dict):
        own = [obj] if {"estimate", "ci_low", "ci_high"} <= obj.keys() else []
        return own + [s for v in obj.values() for s in _intervals(v)]
    if isinstance(obj, list):
        return [s for v in obj for s in _intervals(v)]
    return []


@given(runs=zoos(), basis=st.sampled_from(["peak", "largest"]))
@examples(EXAMPLES)
def test_a_failed_run_never_becomes_a_figure(runs: pd.DataFrame, basis: str) -> None:
    table = zoo_table(runs, 0.5, basis)
    ok = runs[runs["status"] == "ok"]
    keys = runs.assign(task_us=runs["task_us"].where(runs["kind"] == "metg", 0.0))
    groups = keys.groupby(["target", "kind", "task_us"])["status"]
    gone = {k for k, s in groups if not (s == "ok").any()}
    assert {(a["target"], a["kind"], a["task_us"] or 0.0) for a in table["absent"]} == gone
    assert all(a["cause"] == CAUSE for a in table["absent"])
    for t, cells in table["patterns"].items():  # a pattern's figure only from its ok runs
        for kind in cells:
            assert (t, kind, 0.0) not in gone
    for t, m in table["metg"].items():
        measured = set(ok[(ok["target"] == t) & (ok["kind"] == "metg")]["task_us"])
        assert {p["task_us"] for p in m["curve"]} == measured
    assert (unanswered(table) is not None) == bool(gone)
    rows = rows_for_table(table)
    assert all(math.isfinite(x) for x in numbers_in(table) + numbers_in(rows))
    for s in _intervals(table):
        if s["ci_low"] is not None:
            assert s["ci_low"] <= s["estimate"] * (1 + 1e-9) + 1e-12
            assert s["estimate"] <= s["ci_high"] * (1 + 1e-9) + 1e-12
