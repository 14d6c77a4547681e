"""``zoo --precision PCT``: each measurement of the zoo repeated until its interval is known.

A zoo's window is its own (``--point-s`` sizes a METG run, ``--dag-tasks`` a pattern's), and
its engines have no stored variance parts, so the zoo is its own pilot: its first rounds
(``--runs`` of each measurement, and the METG search) measure each row's run-to-run spread
of the log wall time (the time a row reports; a METG row's efficiency is ideal ÷ wall, so its
relative interval is the same). From them each row's runs to a 95 % t half-width of
±target are planned (``analysis.sizing.pairs_needed``), priced at the row's own mean run
time, and printed; a plan past ``--max-time`` is one line naming its time, exit 2, nothing
more run (the pilot stays stored: run again to plan from it without running). Then rounds,
each open row once in random order, until every row is known: a row stops once its
interval is within the target (from ``FIRST_LOOK`` runs on), at its plan's overrun
(``most_pairs``: 1.5× its runs needed, renewed from its runs after each round), or when
another round would pass ``--max-time``.

The rule stops on the spread alone (Chow–Robbins' fixed-width interval): no verdict is
drawn, so no alpha is spent on looking; each row's interval is at 95 %, not corrected for
the number of rows (the scoreboard's own intervals, like the rest of the zoo's).
"""

from __future__ import annotations

import dataclasses
import json
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import numpy as np

from perflab.analysis.sizing import MIN_PAIRS, duration, half_width, pairs_needed
from perflab.campaign.extend import _store
from perflab.campaign.store import Store
from perflab.errors import PerflabError

#: The rows' intervals: 95 %.
LEVEL = 0.05
#: Runs of a row before its interval may stop it.
FIRST_LOOK = MIN_PAIRS
#: A planned row may run on to this many times its planned runs (compare's overrun).
OVERRUN = 1.5


@dataclass
class Row:
    """One measurement of the zoo (a target, workload and parameters): its item, its ok runs'
    wall times, the seconds its runs took, and what its looks reached."""

    item: dict[str, Any]
    values: list[float] = field(default_factory=list)
    cost_s: list[float] = field(default_factory=list)
    need: int = 0
    stopped: str | None = None

    @property
    def label(self) -> str:
        s = self.item["spec"]
        return f"{s['target']} {self.item['kind']} {s.get('params', {}).get('task_us', 0):g} µs"

    def width(self) -> float:
        """The relative 95 % t half-width of the row's geometric mean wall time."""
        if len(self.values) < 2:
            return math.inf
        logs = np.log(self.values)
        return math.expm1(half_width(float(np.var(logs, ddof=1)), len(logs), LEVEL))

    @property
    def run_s(self) -> float:
        return float(np.mean(self.cost_s)) if self.cost_s else 0.0


def rows(store: Store, name: str) -> dict[str, Row]:
    """The zoo's rows by their spec, with every ok run stored so far."""
    plan = store.campaign(name).design_info["plan"]
    recs = dict(store.records_by_seq(name))
    out: dict[str, Row] = {}
    for (seq, _), p in zip(store.planned(name), plan, strict=True):
        key = json.dumps(p["spec"], sort_keys=True)
        row = out.setdefault(key, Row({k: v for k, v in p.items() if k != "replicate"}))
        rec = recs.get(seq)
        if rec is None:
            continue
        row.cost_s.append(_seconds(rec))
        if rec.status == "ok" and rec.wall_s and rec.wall_s > 0:
            row.values.append(float(rec.wall_s))
    return out


def _seconds(rec: Any) -> float:
    try:
        t = datetime.fromisoformat(rec.ended_at) - datetime.fromisoformat(rec.started_at)
        return max(0.0, t.total_seconds())
    except (TypeError, ValueError):
        return float(rec.wall_s or 0.0)


def plan(found: dict[str, Row], target: float, max_time_s: float) -> dict[str, Any]:
    """Each row's runs to ±``target`` from its stored runs (``need``), and the plan's line;
    PerflabError (nothing more run) when it takes longer than ``max_time_s`` or no row has
    the 2 ok runs a spread needs."""
    from perflab.compare.precision import log_half, pct

    for r in found.values():
        r.need = runs_needed(r.values, log_half(target))
    known = [r for r in found.values() if r.need]
    if not known:
        raise PerflabError("zoo --precision: no measurement has the 2 ok runs a spread needs")
    more = {id(r): max(0, r.need - len(r.values)) for r in known}
    wall = sum(more[id(r)] * r.run_s for r in known)
    n = sum(more.values())
    if wall > max_time_s:
        raise PerflabError(f"±{pct(target)} on every measurement would take ~{duration(wall)} "
                           f"more here ({n} more runs of {len(known)} measurements), more "
                           f"than --max-time {duration(max_time_s)}")  # fmt: skip
    widest = max(r.width() for r in known)
    line = (f"{n} more runs of {sum(1 for v in more.values() if v)} of {len(found)} "
            f"measurements ({max(more.values())} round(s)), ~{duration(wall)}, expected CI "
            f"±{pct(target)} on each (95%; now ±{pct(widest)} on the widest)")  # fmt: skip
    return {"target": target, "runs": n, "wall_s_predicted": wall, "line": line,
            "need": {k: r.need for k, r in found.items() if r.need},
            "unplanned": [r.label for r in found.values() if not r.need]}  # fmt: skip


def runs_needed(values: list[float], h: float) -> int:
    """The runs a row's spread so far needs for a log half-width ``h`` (0: no spread yet)."""
    var = float(np.var(np.log(values), ddof=1)) if len(values) >= 2 else math.nan
    return pairs_needed(var, h, LEVEL, FIRST_LOOK) if math.isfinite(var) else 0


def open_rows(found: dict[str, Row], target: float) -> list[str]:
    """The rows that run on: planned, not within the target yet, and under their overrun."""
    out = []
    for key, r in found.items():
        if not r.need or r.stopped:
            continue
        if len(r.values) >= FIRST_LOOK and r.width() <= target:
            r.stopped = "precision reached"
        elif len(r.values) >= math.ceil(r.need * OVERRUN):
            r.stopped = "most runs"
        else:
            out.append(key)
    return out


def add_round(store: Store, name: str, items: list[dict[str, Any]], seed: int) -> None:
    """Append one run of each of ``items`` (a fresh random order) to zoo ``name``."""
    definition = store.campaign(name)
    info = dict(definition.design_info)
    rep = max((p["replicate"] for p in info["plan"]), default=-1) + 1
    rng = np.random.default_rng(seed + rep)
    new = [{**items[int(i)], "replicate": rep} for i in rng.permutation(len(items))]
    info["plan"] = [*info["plan"], *new]
    planned = len(store.planned(name))
    _store(store, dataclasses.replace(definition, design_info=info), [([], rep) for _ in new],
           planned)  # fmt: skip


def run_rounds(
    store: Store,
    name: str,
    target: float,
    max_time_s: float,
    run: Callable[[Store, str], dict[str, int]],
    say: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """Plan from the runs stored, print the plan, then run rounds of the open rows until
    every row is known (see the module docstring); returns what was reached."""
    found = rows(store, name)
    planned = plan(found, target, max_time_s)
    if say:
        say(f"plan for ±{target:.1%} on every measurement: {planned['line']}")
    seed = int(store.campaign(name).seed or 0)
    t0, rounds = time.monotonic(), 0
    while due := open_rows(found, target):
        next_s = sum(found[k].run_s for k in due)
        if time.monotonic() - t0 + next_s > max_time_s:
            for k in due:
                found[k].stopped = "time budget"
            break
        add_round(store, name, [found[k].item for k in due], seed)
        run(store, name)
        rounds += 1
        stopped = {k: found[k].stopped for k in found}
        found = rows(store, name)
        for k, r in found.items():
            r.need, r.stopped = _renewed(planned["need"].get(k, 0), r, target), stopped.get(k)
    return reached(found, planned, rounds, time.monotonic() - t0)


def _renewed(planned: int, row: Row, target: float) -> int:
    """A planned row's runs, renewed from all its runs so far: never fewer than its plan,
    more when its spread turns out wider than its pilot's (a 3-run pilot's variance has 2
    df: on HTEX and Dask it planned half the runs a ±5 % row needed). Stopping still looks at
    the spread alone, so renewing spends no alpha; ``--max-time`` still bounds the rounds."""
    from perflab.compare.precision import log_half

    return max(planned, runs_needed(row.values, log_half(target))) if planned else 0


def reached(found: dict[str, Row], planned: dict[str, Any], rounds: int, wall_s: float
            ) -> dict[str, Any]:  # fmt: skip
    """Each row's half-width reached, why it stopped, its runs' seconds and its precision per
    hour (``per_hour`` of its half-width and its own seconds), and the line that says it."""
    from perflab.compare.precision import pct, per_hour, per_hour_text

    target = planned["target"]
    # each row's rate by its own runs' seconds (a row's runs cost what its engine costs)
    rows_out = [{"row": r.label, "runs": len(r.values), "half_width": _finite(r.width()),
                 "planned_runs": planned["need"].get(k, 0), "needed_runs": r.need,
                 "stopped": r.stopped or "not planned", "wall_s": float(sum(r.cost_s)),
                 "half_width_per_hour": per_hour(r.width(), sum(r.cost_s))}
                for k, r in found.items()]  # fmt: skip
    grew = sum(1 for k, r in found.items() if r.need > planned["need"].get(k, 0))
    within = sum(1 for r in found.values() if r.need and r.width() <= target)
    widest = max((r.width() for r in found.values() if r.need), default=math.inf)
    # the widest interval was bought with the pilot's runs too: its rate is over every run's
    # seconds (the rounds' wall time alone would flatter it)
    spent = float(sum(sum(r.cost_s) for r in found.values()))
    rate = per_hour(widest, spent)
    line = (f"precision: {within} of {sum(1 for r in found.values() if r.need)} measurements "
            f"within ±{pct(target)} after {rounds} more rounds in {duration(wall_s)} (widest "
            f"±{pct(widest)}; {grew} needed more runs than their pilot planned); each row's "
            f"95% interval, stopped on its spread alone: no "
            f"verdict drawn, no alpha spent on looking; on the widest: {per_hour_text(rate)}"
            )  # fmt: skip
    return {**planned, "rounds": rounds, "wall_s": wall_s, "runs_s": spent, "rows": rows_out,
            "line": line, "half_width": _finite(widest), "half_width_per_hour": rate}  # fmt: skip


def _finite(x: float) -> float | None:
    return x if math.isfinite(x) else None
