"""Stop when known: a campaign with a precision target (``campaign create --precision``,
``campaign extend --precision``) skips a set's remaining planned runs once the set is known.

A set is looked at before each replicate block (the ABBA/round blocks the plan interleaves
in random order), and trusted from half its planned runs on, as ``compare --precision``'s
precision rule is: it is known when the 95 % t half-width of its mean log metric is within
the set's share of the target, the width that, were every set so, gives each main effect
±target (``reach.design_scale``: the target over sqrt(2 × scale); a sweep's level against its
base needs each set within target/√2, a 2³ factorial's sets may be √2 × target wide). The
rule looks at the spread alone and draws no verdict (Chow–Robbins' fixed-width interval),
so it spends no alpha on looking.

The runs skipped are taken off the plan and recorded in the definition's
``design_info["not_needed"]`` (never stored as runs: neither failed nor measured), so
``campaign status``'s runs planned, its ETA and a resumed ``campaign run`` all count them
alike.

With ``campaign create --fastest`` or ``campaign run --fastest`` (the goal stored in the
definition) a set also stops once it is out of the running (``running``: clearly slower than
the best, at a level that accounts for the sets and the looks); its runs are not needed
through the same ``skip``."""

from __future__ import annotations

import dataclasses
import json
import math
import time
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from datetime import UTC, datetime
from itertools import groupby
from typing import Any

import numpy as np

from perflab.campaign import running
from perflab.campaign.definition import CampaignDef
from perflab.campaign.runners.base import OnResult, Runner
from perflab.campaign.store import Store
from perflab.factors.labels import shown, shown_all
from perflab.spec import RunSpec


def applies(definition: CampaignDef) -> bool:
    """Whether ``campaign run`` stops this campaign's sets early: a target or the goal of
    the fastest set, and a design of its own (``running.stoppable``)."""
    wants = definition.precision is not None or running.goal(definition) is not None
    return wants and running.stoppable(definition)


def not_needed(definition: CampaignDef) -> int:
    """How many planned runs were skipped as not needed."""
    return sum(len(s["seqs"]) for s in definition.design_info.get("not_needed", []))


def stopped(definition: CampaignDef) -> list[dict[str, Any]]:
    """Each set stopped early: its runs, planned runs, the runs not needed and why."""
    out = []
    for n in definition.design_info.get("not_needed", []):
        why = running.reason(n)
        out.append({"set": n["set"], "runs": n["runs"], "planned": n["planned"],
                    "not_needed": len(n["seqs"]), "reason": why,
                    "line": f"{n['set']}: {len(n['seqs'])} runs not needed, {why}"})  # fmt: skip
    return out


def spent(definition: CampaignDef) -> dict[str, Any] | None:
    """The goal of the fastest set and the error its looks spend, stated (None: no goal)."""
    g = running.goal(definition)
    return None if g is None else running.spent(g, definition.replicates, definition.sets)


def set_target(definition: CampaignDef, sets: list[list[str]]) -> float | None:
    """The log half-width a set's mean must reach (see the module docstring); None when no
    effect of the design is estimable (then no set stops early)."""
    from perflab.analysis.reach import design_scale, design_x
    from perflab.errors import PerflabError

    assert definition.precision is not None
    try:
        factors = shown_all(definition.factors)
        scale = design_scale(design_x([shown_all(s) for s in sets], factors), factors)
    except PerflabError:
        return None
    return math.log1p(definition.precision) / math.sqrt(2 * scale)


def set_key(treatments: Iterable[str]) -> str:
    """A set's name as the stopping notes keep it: its treatments sorted, comma-joined (a
    planned ``label:NAME`` as its runs' records name it, ``NAME``)."""
    return ",".join(sorted(shown(t) for t in treatments if t))


def logs(store: Store, name: str, before: int | None = None) -> dict[str, list[float]]:
    """Each set's log metric over its ok runs (µs per task, else wall seconds: a command's,
    as status), of the replicate blocks before ``before`` only when given."""
    sql = (
        "SELECT r.treatments, r.us_per_task, r.wall_s FROM runs r JOIN planned p ON "
        "p.campaign = r.campaign AND p.seq = r.seq WHERE r.campaign=? AND r.status='ok'"
    )
    rows = store.db.execute(
        sql + (" AND p.replicate < ?" if before is not None else ""),
        (name,) if before is None else (name, before),
    ).fetchall()
    col = 1 if all(r[1] is not None for r in rows) else 2
    out: dict[str, list[float]] = {}
    for r in rows:
        if r[col] is not None and r[col] > 0:
            out.setdefault(set_key((r[0] or "").split(",")), []).append(math.log(r[col]))
    return out


def known(store: Store, definition: CampaignDef, block: int) -> dict[str, dict[str, Any]]:
    """The sets with planned runs left whose interval meets their share of the target, from
    half their planned runs on: set -> its runs, planned runs and half-width (relative)."""
    from perflab.analysis.exact import EXACT_RTOL
    from perflab.analysis.reach import LEVEL
    from perflab.analysis.sizing import half_width

    name = definition.name
    planned = Counter(set_key(t) for _, t in store.planned(name))
    open_sets = {set_key(t) for _, t in store.pending(name)}
    if definition.precision is None or not open_sets:
        return {}
    h = set_target(definition, [s.split(",") if s else [] for s in planned])
    if h is None:
        return {}
    ys = logs(store, name)
    out = {}
    for s in open_sets:
        y = ys.get(s, [])
        if len(y) < max(2, math.ceil(planned[s] / 2)):
            continue
        var = float(np.var(y, ddof=1))
        hw = half_width(var, len(y), LEVEL)
        if hw <= h:  # exact: no spread beyond rounding, a value rather than an interval
            out[s] = {"runs": len(y), "planned": planned[s], "half_width": math.expm1(hw),
                      "exact": math.sqrt(var) <= EXACT_RTOL, "block": block,
                      "why": "known"}  # fmt: skip
    return out


def out_of_running(store: Store, definition: CampaignDef, block: int) -> dict[str, dict[str, Any]]:
    """The sets with planned runs left that are out of the running at the look before
    replicate ``block`` (``running``), judged on the runs of the blocks before it once every
    one of them is done; {} without the goal or a look there."""
    g = running.goal(definition)
    look = None if g is None else running.look_level(g, definition.replicates, block)
    if g is None or look is None:
        return {}
    name = definition.name
    pending = store.pending(name)
    block_of = dict(store.db.execute("SELECT seq, replicate FROM planned WHERE campaign=?",
                                     (name,)).fetchall())  # fmt: skip
    if any(block_of[q] < block for q, _ in pending):
        return {}  # an earlier block unfinished: its look is made once it is done
    planned = Counter(set_key(t) for _, t in store.planned(name))
    gone = running.stopped_before(definition.design_info.get("not_needed", []), block)
    ys = {s: y for s, y in logs(store, name, block).items() if s not in gone}
    open_sets = {set_key(t) for _, t in pending}
    conf = running.set_confidence(look[1], max(len(planned), definition.sets))
    found = running.judge(ys, open_sets, conf, g.threshold)
    return {s: {"runs": len(ys[s]), "planned": planned[s], **v, "block": block,
                "why": "out of the running", "look": look[0], "level": look[1],
                "threshold": g.threshold} for s, v in found.items()}  # fmt: skip


def stops(store: Store, definition: CampaignDef, block: int) -> dict[str, dict[str, Any]]:
    """The sets that stop at the look before replicate ``block``: known (their interval
    within their share of the target) or out of the running (the goal of the fastest set)."""
    found = out_of_running(store, definition, block)
    return {**found, **known(store, definition, block)}


def skip(store: Store, name: str, sets: dict[str, dict[str, Any]]) -> int:
    """Take the stopped ``sets``' pending runs off the plan and record them as not needed,
    in one transaction (refused, as a run's store is, once another driver holds the lease)."""
    if not sets:
        return 0
    pending = [(q, set_key(t)) for q, t in store.pending(name)]
    at = datetime.now(UTC).isoformat(timespec="seconds")
    notes = [{"at": at, "set": s or "base", **v, "seqs": [q for q, k in pending if k == s]}
             for s, v in sorted(sets.items())]  # fmt: skip
    info = {**store.campaign(name).design_info}
    info["not_needed"] = [*info.get("not_needed", []), *notes]
    seqs = [q for n in notes for q in n["seqs"]]
    write_info(store, name, info, seqs)
    return len(seqs)


def write_info(store: Store, name: str, info: dict[str, Any], drop: Sequence[int] = ()) -> None:
    """Store campaign ``name``'s ``design_info`` and take the runs ``drop`` off its plan, in
    one transaction, while this driver holds the lease (when it holds one)."""
    definition = store.campaign(name)
    body = {k: v for k, v in definition.to_dict().items() if k not in ("name", "created_at")}
    body["design_info"] = info
    with store.tx() as db:
        if name in store.leases:
            store.check_lease(db, name)
        db.execute("UPDATE campaigns SET definition=? WHERE name=?", (json.dumps(body), name))
        db.executemany("DELETE FROM planned WHERE campaign=? AND seq=?", [(name, q) for q in drop])


def record_goal(store: Store, name: str, g: running.Goal) -> CampaignDef:
    """Store the goal of the fastest set in campaign ``name``'s definition (``--fastest``;
    PerflabError if another goal is stored and a run made: its looks spent their error at
    it)."""
    definition = store.campaign(name)
    if running.goal(definition) != g:
        ran = store.counts(name)["done"] > 0
        running.resolve(definition, True, g.threshold, g.alpha, ran)  # refuses another goal
        write_info(store, name, {**definition.design_info, running.KEY: dataclasses.asdict(g)})
    return store.campaign(name)


def run_blocks(
    store: Store,
    definition: CampaignDef,
    runner: Runner,
    pending: list[tuple[int, RunSpec]],
    deadline: float | None,
    on_result: OnResult | None,
    on_skip: Callable[[int], None] | None = None,
) -> None:
    """Run ``pending`` one replicate block at a time, skipping, before each block, the runs
    of the sets stopped by then (``on_skip`` hears how many, for a progress bar's total)."""
    name = definition.name
    block_of = dict(
        store.db.execute("SELECT seq, replicate FROM planned WHERE campaign=?", (name,)).fetchall()
    )

    def look(block: int) -> None:
        n = skip(store, name, stops(store, store.campaign(name), block))  # fresh notes
        if n and on_skip is not None:
            on_skip(n)

    for block, runs in groupby(pending, key=lambda r: block_of.get(r[0])):
        look(block if block is not None else 1 + max(block_of.values(), default=0))
        left = {q for q, _ in store.pending(name)}
        todo = [r for r in runs if r[0] in left]
        if deadline is not None and time.monotonic() >= deadline:
            return
        if todo:
            runner.run(store, todo, deadline, on_result)
    # the last block's sets, for status: at the next block planned (none: past the last)
    rest = [block_of[q] for q, _ in store.pending(name) if q in block_of]
    look(min(rest) if rest else 1 + max(block_of.values(), default=0))
