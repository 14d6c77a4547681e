"""``campaign status`` after runs are planned (``campaign extend --precision``) and not yet run:
it says both, done and planned not yet run, predicts each effect's half-width at the plan's
end, and counts the runs beyond the plan (it used to predict from the runs done alone, as if
the plan's runs did not exist). Pure (``reach``) and on a stand-in store (nothing runs)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from perflab.analysis.reach import design_x, more_per_set, reach
from perflab.analysis.sizing import t_quantile
from perflab.campaign.plan import create_ordered, status
from perflab.campaign.store import Store
from perflab.run.record import RunRecord
from perflab.spec import RunSpec

SETS = [[], ["a"], ["b"], ["a", "b"]]


def design(reps: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    sets = [s for _ in range(reps) for s in SETS]
    y = np.array([1000 * (0.5 if "a" in s else 1) * math.exp(rng.normal(0, 0.05)) for s in sets])
    return y, design_x(sets, ["a", "b"])


def test_pending_runs_give_the_half_width_at_the_plan_end_and_count() -> None:
    y, x = design(3)
    todo = design_x([s for _ in range(5) for s in SETS], ["a", "b"])
    now = reach(y, x, ["a", "b"], 2.0, 0.01)
    planned = reach(y, x, ["a", "b"], 2.0, 0.01, todo)
    assert planned["runs"] == 12 and planned["pending"] == 20
    assert planned["runs_at_plan_end"] == 32 and now["pending"] == 0
    for e_now, e in zip(now["effects"], planned["effects"], strict=True):
        assert e["half_width"] == pytest.approx(e_now["half_width"])  # reached: the same
        # the design 8/3 times as large: the variance by 3/8, the t quantile at 28 df
        shrink = math.sqrt(12 / 32) * t_quantile(0.05, 28) / t_quantile(0.05, 8)
        want = math.expm1(math.log1p(e_now["half_width"]) * shrink)
        assert e["half_width_at_plan_end"] == pytest.approx(want, rel=1e-9)
        # the runs to the target are the same design's; the ones beyond the plan are fewer
        assert e["runs_to_target"] == pytest.approx(e_now["runs_to_target"], abs=1)
        assert e["more_runs"] == e["runs_to_target"] - 32
        assert "half_width_at_plan_end" not in e_now
    text = "\n".join(planned["lines"])
    assert "12 done, 20 planned not yet run" in text and "at the plan's end" in text
    assert "beyond the plan" in text
    # campaign extend --precision, again: only what the plan does not reach already
    more, hw = more_per_set(planned)
    assert sum(more.values()) <= max(e["more_runs"] for e in planned["effects"]) + len(SETS)
    assert hw is not None and hw <= 0.0101


def test_a_plan_that_reaches_the_target_asks_no_more_runs() -> None:
    y, x = design(3, seed=1)
    todo = design_x([s for _ in range(200) for s in SETS], ["a", "b"])
    p = reach(y, x, ["a", "b"], 2.0, 0.02, todo)
    assert all(e["more_runs"] == 0 for e in p["effects"])
    assert more_per_set(p) == ({}, None)
    assert any("within the target ±2.0% at the plan's end" in ln for ln in p["lines"])


def test_status_counts_the_runs_planned_and_not_yet_run(tmp_path: Path) -> None:
    store = Store(tmp_path / "s.db")
    sets = [s for _ in range(5) for s in SETS]
    create_ordered(store, "c", RunSpec(metric="us_per_task", command="echo 1"), ["a", "b"], sets)
    y, _ = design(5)
    done = []
    for seq, s in enumerate(sets[:12]):  # three replicates run, two planned
        t = f"2026-01-01T00:00:{seq:02d}"
        done.append((RunRecord(run_id=f"r{seq}", campaign="c", started_at=t + ".000+00:00",
                               ended_at=t + ".500+00:00", target="command", workload=None,
                               status="ok", wall_s=float(y[seq]), treatments=s), seq))  # fmt: skip
    store.add_runs(done)
    p = status(store, "c", 0.01)["precision"]
    assert p["runs"] == 12 and p["pending"] == 8 and p["runs_at_plan_end"] == 20
    assert all(e["half_width_at_plan_end"] < e["half_width"] for e in p["effects"])
    assert all(e["more_runs"] == e["runs_to_target"] - 20 for e in p["effects"])
