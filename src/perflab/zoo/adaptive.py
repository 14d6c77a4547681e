"""The METG search: after each round of runs, each engine's next task size (or why not).

A round measures the levels planned so far; ``next_round`` reads the efficiency curve of
each engine (``analysis.metg.next_level``), appends the next level's runs to the campaign
(interleaved replicates, like the first round) and records why an engine's search stopped
in the campaign's ``design_info["metg_search"]``, which the scoreboard reports beside a
bound.  Each point gets enough tasks that its ideal time is at least ``point_s`` (Task
Bench's rule: many tasks per point, so that start-up and the last task's tail are a small
part of the wall time and the efficiency interval is narrow).
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
import pandas as pd

from perflab.analysis.metg import efficiency_curve, next_level
from perflab.campaign.extend import _store
from perflab.campaign.store import Store
from perflab.zoo.frame import zoo_frame
from perflab.zoo.suite import MAX_TASKS, METG_WORKLOAD, ZooConfig, _item, metg_tasks, slots_of

__all__ = ["MAX_ROUNDS", "MAX_TASKS", "decide", "metg_tasks", "next_round"]

#: Most rounds of a search (each adds at most one level per engine).
MAX_ROUNDS = 10
#: Failed runs at a level that stop the search (it would only plan more of them).
FAILS_TO_STOP = 3


def decide(
    runs: pd.DataFrame, target: str, threshold: float, basis: str, max_ratio: float
) -> tuple[float | None, str]:
    """One engine's next METG level from its runs so far (None: the search stops, why)."""
    mine = runs[(runs["target"] == target) & (runs["kind"] == "metg")]
    ok = mine[mine["status"] == "ok"]
    failed = tuple(float(x) for x in mine[mine["status"] != "ok"]["task_us"].unique())
    if ok["task_us"].nunique() < 1:
        return None, "no METG run succeeded"
    curve = efficiency_curve(ok, basis)
    level, why = next_level(curve, threshold, max_ratio, failed_us=failed)
    if level is not None:
        fails = int(np.isclose(mine[mine["status"] != "ok"]["task_us"], level, rtol=1e-9).sum())
        if fails >= FAILS_TO_STOP:  # the engine's limit, or a broken setup: not more runs
            return None, f"{fails} runs at {level:g} µs failed"
    return level, why


def next_round(
    store: Store, name: str, threshold: float, basis: str, max_ratio: float = 2.0
) -> list[dict[str, Any]]:
    """Plan each engine's next METG level in campaign ``name``; returns the new items
    (empty: every search has stopped; the reasons are stored)."""
    definition = store.campaign(name)
    cfg = ZooConfig(**definition.design_options)
    info = dict(definition.design_info)
    search: dict[str, Any] = dict(info.get("metg_search") or {})
    runs = zoo_frame(store.records(name))
    rounds = int(info.get("metg_rounds", 0))
    items = []
    for target in cfg.targets:
        if target in search and search[target].get("stopped"):
            continue
        level, why = decide(runs, target, threshold, basis, max_ratio)
        if level is not None and rounds >= MAX_ROUNDS:
            level, why = None, f"{MAX_ROUNDS} rounds done ({why} next)"
        search[target] = {"stopped": level is None, "reason": why, "next_us": level}
        if level is None:
            continue
        opts = {"workers": cfg.workers} if cfg.workers else {}
        # a level measured before (more replicates) keeps its own number of tasks
        same = runs[(runs["target"] == target) & np.isclose(runs["task_us"], level, rtol=1e-9)]
        tasks = int(same["tasks"].max()) if len(same) else (
            metg_tasks(level, slots_of(cfg.workers), cfg.point_s, cfg.metg_tasks))  # fmt: skip
        items.append(_item(cfg, target, METG_WORKLOAD, tasks, opts, level))
    info["metg_search"] = search
    info["metg_rounds"] = rounds + 1
    planned = store.planned(name)
    rng = np.random.default_rng((definition.seed or 0) + rounds + 1)
    rep0 = max((p["replicate"] for p in info["plan"]), default=-1) + 1
    new = [
        {**items[int(i)], "replicate": rep0 + rep}
        for rep in range(cfg.replicates)
        for i in rng.permutation(len(items))
    ]
    info["plan"] = [*info["plan"], *new]
    updated = dataclasses.replace(definition, design_info=info, sets=definition.sets + len(items))
    _store(store, updated, [([], p["replicate"]) for p in new], len(planned))
    return items
