"""A culprit's hunk groups measured together (``--explain``): the cells of ``factorial.design``
over its largest groups, each cell the culprit with some groups reverted to the commit before
(explain's transforms, through ``prepare``), every cell run once per replicate in a random
order, and each group's share, its effect alone and every two-way interaction estimated with
intervals (``factorial.fit``), look by look: the replicates stop once every group's effect is
decided or negligible (``factorial.sequential``). The runs are kept in the search's state
file, one by one: a rerun goes on where it stopped."""

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
        f"× up to {reps} replicates = {len(d) * reps} runs at most")  # fmt: skip
    key = f"together:{culprit['key']}:{'|'.join(names)}:{reps}"
    block = Replicates(d, reps, key, (culprit_ready, kept, package, prepare, cells), settings,
                       state, run or run_one, say, tally or Tally())  # fmt: skip
    whole = math.log(culprit["step"]["ratio"])
    seq = fx.sequential(block, k, whole, settings.alpha, settings.threshold, reps,
                        not settings.fixed)  # fmt: skip
    if block.made == 0:  # every run this needed was kept from before
        state.reused += 1
    rows = [row for row in block.rows if row[0] < seq["replicates"]]
    return _estimates(kept, out_of, d, rows, seq, culprit, settings)


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


class Replicates:
    """The cells' runs, one replicate at a time (``factorial.sequential``'s ``block``): each
    replicate runs every cell once in its own random order (seeded by the key: a rerun runs
    the same order and goes on where it stopped), each run kept in the state as made. ``rows``:
    [replicate, cell, value or None]; ``made``: the runs made here (not kept from before)."""

    def __init__(
        self, d: Any, reps: int, key: str, how: tuple[Prepared, list[Group], str, Any, dict],
        settings: Settings, state: State, run: RunOne, say: Callable[[str], None], tally: Tally,
    ) -> None:  # fmt: skip
        self.d, self.reps, self.how, self.settings, self.state = d, reps, how, settings, state
        self.run, self.say, self.tally, self.made = run, say, tally, 0
        self.rows: list[list[Any]] = state.data.setdefault("together", {}).setdefault(key, [])
        rng = random.Random(key)
        self.orders = [rng.sample(range(len(d)), len(d)) for _ in range(reps)]

    def __call__(self, r: int) -> list[fx.Row]:
        """Replicate ``r``'s rows, its runs made where not kept."""
        culprit_ready, kept, package, prepare, cells = self.how
        done = {(rr, c) for rr, c, _ in self.rows}
        if not all((r, c) in done for c in self.orders[r]):
            self.say(f"  replicate {r + 1} (of {self.reps} at most) of the hunk groups' "
                     f"cells; {self.tally.add(0)}")  # fmt: skip
        for c in self.orders[r]:
            if (r, c) in done:
                continue
            on = tuple(i for i, x in enumerate(self.d[c]) if x)
            if on not in cells:
                try:
                    cells[on] = _cell(culprit_ready, [kept[i] for i in on], package, prepare)
                except PerflabError:
                    cells[on] = None  # the cell is lost: its runs count as failed
            value = self.run(cells[on], self.settings.metric) if cells[on] is not None else None
            self.rows.append([r, c, value])
            self.state.save()
            self.tally.add(1)
            self.made += 1
        return [(rr, [int(x) for x in self.d[c]], v) for rr, c, v in self.rows if rr == r]


def _estimates(
    kept: list[Group], out_of: list[dict[str, Any]], d: Any, rows: list[list[Any]],
    seq: dict[str, Any], culprit: dict[str, Any], settings: Settings,
) -> dict[str, Any]:  # fmt: skip
    """The groups' entries, the interactions and the design, from the runs and the last
    look's fit (``seq``: ``factorial.sequential``'s answer)."""
    k, whole = len(kept), math.log(culprit["step"]["ratio"])
    est = seq["fit"]
    failed = sum(v is None for _, _, v in rows)
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
        "design": fx.design_name(k), "groups": k, "cells": len(d),
        "replicates": seq["replicates"], "most_replicates": seq["most"],
        "stopped": seq["stopped"], "looks": seq["looks"],
        "runs": len(rows), "failed_runs": failed,
        "level": est["level"] if est else None, "df": est["df"] if est else None,
        "aliasing": ALIASING if k > 1 else "one group: no interaction",
        "total": fx.as_share(est["total"], whole) if est else None,
    }  # fmt: skip
    return {"groups": groups + out_of, "interactions": inter, "design": design}
