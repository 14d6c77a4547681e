"""A culprit's hunk groups measured together (``--explain``): the cells of ``factorial.design``
over its largest groups, each cell the culprit with some groups reverted to the commit before
(explain's transforms, through ``prepare``), every cell run once per replicate in a random
order, and each group's share, its effect alone and every two-way interaction estimated with
intervals (``factorial.fit``). The runs are kept in the search's state file, one by one: a
rerun goes on where it stopped."""

from __future__ import annotations

import math
import random
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from perflab.bisect import factorial as fx
from perflab.bisect.driver import Settings, State, Tally
from perflab.errors import PerflabError
from perflab.explain.hunks import Group
from perflab.prepare import Prepared
from perflab.spec import RunSpec

#: One run of a prepared cell: the metric's value, or None when the run failed.
RunOne = Callable[[Prepared, str], float | None]
ALIASING = ("every two-way interaction estimable; each aliased only with interactions of "
            "three or more groups, taken as none")  # fmt: skip


def run_one(ready: Prepared, metric: str) -> float | None:
    """One measured run of ``ready``: its metric, or None when it failed or has none."""
    from perflab.compare.gate import metric_value
    from perflab.run.measure import measure

    rec = measure(ready)
    v = metric_value(rec, metric) if rec.status == "ok" else None
    return v if v is not None and v > 0 and math.isfinite(v) else None


def measure_together(
    culprit: dict[str, Any],
    culprit_ready: Prepared,
    groups: list[Group],
    package: str,
    settings: Settings,
    state: State,
    prepare: Callable[[RunSpec], Prepared],
    on_step: Callable[[str], None] | None = None,
    run: RunOne | None = None,
    tally: Tally | None = None,
) -> dict[str, Any]:
    """``groups`` (at most ``factorial.MOST_GROUPS``) measured as a factorial on the culprit:
    ``{"groups": [...], "interactions": [...], "design": {...}}``. A group whose revert
    does not apply is named and left out of the design. ``tally`` counts the runs made."""
    say = on_step or (lambda _: None)
    cells: dict[tuple[int, ...], Prepared | None] = {}
    out_of: list[dict[str, Any]] = []
    kept: list[Group] = []
    for g in groups:  # a group whose own revert does not apply stays out of every cell
        try:
            cells[(len(kept),)] = _cell(culprit_ready, [g], package, prepare)
            kept.append(g)
        except PerflabError as exc:
            out_of.append({**g.to_dict(), "not_measured": f"the revert does not apply: {exc}"})
    k = len(kept)
    d = fx.design(k)
    if d is None:
        return {"groups": out_of, "interactions": [], "design": None}
    reps = fx.replicates(k, len(d), settings.n_max)
    names = [g.name for g in kept]
    say(f"hunk groups of {culprit['key'][:10]} together: {fx.design_name(k)}, {len(d)} cells "
        f"× {reps} replicates = {len(d) * reps} runs")  # fmt: skip
    key = f"together:{culprit['key']}:{'|'.join(names)}:{reps}"
    rows = _runs(d, reps, key, (culprit_ready, kept, package, prepare, cells), settings, state,
                 run or run_one, say, tally or Tally())  # fmt: skip
    return _estimates(kept, out_of, d, reps, rows, culprit, settings)


def _cell(
    culprit_ready: Prepared, reverted: list[Group], package: str,
    prepare: Callable[[RunSpec], Prepared],
) -> Prepared:  # fmt: skip
    """The culprit with ``reverted`` set back to the commit before (explain's transforms)."""
    if not reverted:
        return culprit_ready
    spec = culprit_ready.spec
    added = [{**t, "factor": g.name} for g in reverted for t in g.transforms(package)]
    return prepare(replace(spec, transforms=[*spec.transforms, *added]))


def _runs(
    d: Any, reps: int, key: str, how: tuple[Prepared, list[Group], str, Any, dict],
    settings: Settings, state: State, run: RunOne, say: Callable[[str], None], tally: Tally,
) -> list[list[Any]]:  # fmt: skip
    """Every cell once per replicate, each replicate in its own random order (seeded by the
    key: a rerun runs the same order and goes on where it stopped). Rows: [replicate, cell,
    value or None]."""
    culprit_ready, kept, package, prepare, cells = how
    kept_rows = state.data.setdefault("together", {}).setdefault(key, [])
    done = {(r, c) for r, c, _ in kept_rows}
    if len(done) == reps * len(d):
        state.reused += 1
    rng = random.Random(key)
    for r in range(reps):
        order = rng.sample(range(len(d)), len(d))
        if all((r, c) in done for c in order):
            continue
        say(f"  replicate {r + 1}/{reps} of the hunk groups' cells; {tally.add(0)}")
        for c in order:
            if (r, c) in done:
                continue
            on = tuple(i for i, x in enumerate(d[c]) if x)
            if on not in cells:
                try:
                    cells[on] = _cell(culprit_ready, [kept[i] for i in on], package, prepare)
                except PerflabError:
                    cells[on] = None  # the cell is lost: its runs count as failed
            value = run(cells[on], settings.metric) if cells[on] is not None else None
            kept_rows.append([r, c, value])
            state.save()
            tally.add(1)
    return kept_rows


def _estimates(
    kept: list[Group], out_of: list[dict[str, Any]], d: Any, reps: int, rows: list[list[Any]],
    culprit: dict[str, Any], settings: Settings,
) -> dict[str, Any]:  # fmt: skip
    """The groups' entries, the interactions and the design, from the runs."""
    k, whole = len(kept), math.log(culprit["step"]["ratio"])
    ok = [(r, [int(x) for x in d[c]], v) for r, c, v in rows if v is not None]
    est = fx.fit(ok, k, whole, settings.alpha) if len(ok) > 1 else None
    lost = "unassessable: the runs that were measured cannot estimate it (failed runs)"
    groups = []
    for i, g in enumerate(kept):
        e = est["groups"][i] if est else {"revert": None, "alone": None, "share": None}
        entry: dict[str, Any] = {**g.to_dict(), "design": "together"}
        if est:
            entry["level"] = est["level"]
        if e["share"] is None or e["revert"] is None:
            groups.append({**entry, "not_measured": lost})
            continue
        alone = fx.as_share(e["alone"], whole)
        entry.update(fx.as_ratio(e["revert"], settings.threshold) or {})
        entry.update(fx.as_share(e["share"], whole) or {})
        if alone:
            entry.update(alone_share=alone["share"], alone_low=alone["share_low"],
                         alone_high=alone["share_high"])  # fmt: skip
        groups.append(entry)
    inter = []
    for it in est["interactions"] if est else []:
        pair = [kept[j].name for j in it["pair"]]
        got = {**(fx.as_ratio(it["effect"], settings.threshold) or {}),
               **(fx.as_share(it["effect"], whole) or {})}  # fmt: skip
        inter.append({"groups": pair, **got} if got else {"groups": pair, "not_measured": lost})
    design = {
        "design": fx.design_name(k), "groups": k, "cells": len(d), "replicates": reps,
        "runs": len(rows), "failed_runs": len(rows) - len(ok),
        "level": est["level"] if est else None, "df": est["df"] if est else None,
        "aliasing": ALIASING if k > 1 else "one group: no interaction",
        "total": fx.as_share(est["total"], whole) if est else None,
    }  # fmt: skip
    return {"groups": groups + out_of, "interactions": inter, "design": design}
