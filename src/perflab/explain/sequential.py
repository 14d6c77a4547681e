"""``explain --precision``: the step stage measured round by round until it is known.

The step is a planned paired comparison of release A with B (``compare --precision``'s looks
and stopping rule, ``precision.Looks``): the stage's campaign holds the rounds up to the
plan's overrun, and after each round due a look the pairs are tested at the look's spent
level; it stops once the interval is within the target or the verdict is faster/slower, or
when another round would pass the time budget (a last look at a level not yet spent). The
rounds not needed stay planned, not run. Resumable: run again, the looks are replayed from
the stored rounds and the stage goes on where it stopped.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import Any

from perflab.campaign.plan import run_campaign
from perflab.campaign.store import Store
from perflab.compare import precision as pp
from perflab.compare.stats import HIGHER_IS_BETTER, decide
from perflab.explain.plan import OnStage, Setup, value

A, B = "A", "B"


def run_step(
    store: Store,
    name: str,
    plan: list[tuple[str, int, list[str]]],
    setup: Setup,
    on_stage: OnStage | None,
    out_of_time: Callable[[], bool],
) -> tuple[list[tuple[list[str], Any]], dict[str, Any]]:
    """Run the step's rounds (``plan``: every round of its campaign ``name``, made) until a
    look stops it; the rows run (set, record) and the step (``decide``'s dict, with
    ``precision``: why it stopped, the half-width reached, the rounds against the plan)."""
    looks = setup.step_looks
    assert looks is not None
    metric = setup.metrics[0]
    if on_stage:
        on_stage(name, len(store.pending(name)))
    t0 = time.monotonic()
    step: dict[str, Any] = {"different": False, "verdict": "too few runs", "n": 0}
    rows: list[tuple[list[str], Any]] = []
    seen: list[dict[str, Any]] = []
    for n in range(1, looks.last + 1):
        if any(seq < 2 * n for seq, _ in store.pending(name)):
            run_campaign(store, name, max_runs=2)  # the round's two runs, in planned order
        recs = dict(store.records_by_seq(name))
        rows = [(list(t), recs.get(seq)) for seq, t in store.planned(name)][: 2 * n]
        late = n >= 2 and out_of_time()
        level = looks.due(n, late)
        if level is None:
            continue
        a, b = pairs(plan[: 2 * n], rows, metric)
        if len(a) < 2:
            if late or n >= looks.last:
                break
            continue
        dec = decide(a, b, setup.threshold, level, metric in HIGHER_IS_BETTER, paired=True)
        hw = pp.reached(a, b, looks.precision_level)
        seen.append({"n": n, "ratio": dec.ratio, "verdict": dec.verdict, "half_width": hw,
                     "level": level})  # fmt: skip
        step = {**dec.to_dict(), "different": dec.different, "metric": metric}
        why = looks.stop(dec, hw, n, late)
        if why:
            step["precision"] = reached(looks, why, hw, n, seen, setup, time.monotonic() - t0)
            break
    return rows, step


def pairs(
    plan: list[tuple[str, int, list[str]]], rows: list[tuple[list[str], Any]], metric: str
) -> tuple[list[float], list[float]]:
    """A's and B's values of the rounds where both have one, in round order."""
    by: dict[int, dict[str, float]] = {}
    for (cond, r, _), (_, rec) in zip(plan, rows, strict=False):
        v = value(rec, metric)
        if v is not None:
            by.setdefault(r, {})[cond] = v
    both = [by[r] for r in sorted(by) if A in by[r] and B in by[r]]
    return [p[A] for p in both], [p[B] for p in both]


def reached(
    looks: pp.Looks, why: str, hw: float, n: int, seen: list[dict[str, Any]], setup: Setup,
    wall_s: float,
) -> dict[str, Any]:  # fmt: skip
    """What the step's looks reached against its plan, and the line that says it."""
    planned = max(looks.levels, key=looks.levels.__getitem__)
    rate = pp.per_hour(hw, wall_s)
    line = (f"step: {why} after {n} of {planned} planned rounds ({looks.last} at most), "
            f"CI ±{pp.pct(hw)} (target ±{pp.pct(looks.target)}) in {pp.duration(wall_s)}; "
            f"{looks.spent(setup.alpha)}; {pp.per_hour_text(rate)}")  # fmt: skip
    return {
        "stopped": why,
        "half_width": hw if math.isfinite(hw) else None,
        "target": looks.target,
        "rounds": n,
        "planned_rounds": planned,
        "most_rounds": looks.last,
        "levels": {str(k): v for k, v in looks.levels.items()},
        "looks": seen,
        "wall_s": wall_s,
        "half_width_per_hour": rate,
        "line": line,
    }
