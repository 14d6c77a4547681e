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
alike."""

from __future__ import annotations

import json
import math
import time
from collections import Counter
from datetime import UTC, datetime
from itertools import groupby
from typing import Any

import numpy as np

from perflab.campaign.definition import CampaignDef
from perflab.campaign.runners.base import OnResult, Runner
from perflab.campaign.store import Store
from perflab.spec import RunSpec


def applies(definition: CampaignDef) -> bool:
    """Whether ``campaign run`` stops this campaign's sets when known: a target and a design
    of its own (not a search's ordered runs, nor the zoo's explicit plan, which stop
    themselves)."""
    return (
        definition.precision is not None
        and not definition.imported
        and definition.design != "ordered"
        and "plan" not in definition.design_info
    )


def not_needed(definition: CampaignDef) -> int:
    """How many planned runs were skipped as not needed."""
    return sum(len(s["seqs"]) for s in definition.design_info.get("not_needed", []))


def set_target(definition: CampaignDef, sets: list[list[str]]) -> float | None:
    """The log half-width a set's mean must reach (see the module docstring); None when no
    effect of the design is estimable (then no set stops early)."""
    from perflab.analysis.reach import design_scale, design_x
    from perflab.errors import PerflabError

    assert definition.precision is not None
    try:
        scale = design_scale(design_x(sets, definition.factors), definition.factors)
    except PerflabError:
        return None
    return math.log1p(definition.precision) / math.sqrt(2 * scale)


def known(store: Store, definition: CampaignDef) -> dict[str, dict[str, Any]]:
    """The sets with planned runs left whose interval meets their share of the target, from
    half their planned runs on: set -> its runs, planned runs and half-width (relative)."""
    from perflab.analysis.reach import LEVEL
    from perflab.analysis.sizing import half_width

    name = definition.name
    planned = Counter(",".join(sorted(t)) for _, t in store.planned(name))
    open_sets = {",".join(sorted(t)) for _, t in store.pending(name)}
    h = set_target(definition, [s.split(",") if s else [] for s in planned])
    if h is None or not open_sets:
        return {}
    rows = store.db.execute(
        "SELECT treatments, us_per_task, wall_s FROM runs WHERE campaign=? AND status='ok'",
        (name,),
    ).fetchall()
    col = 1 if all(r[1] is not None for r in rows) else 2  # as status: a command's wall_s
    logs: dict[str, list[float]] = {}
    for r in rows:
        if r[col] is not None and r[col] > 0:
            key = ",".join(sorted(r[0].split(","))) if r[0] else ""
            logs.setdefault(key, []).append(math.log(r[col]))
    out = {}
    for s in open_sets:
        y = logs.get(s, [])
        if len(y) < max(2, math.ceil(planned[s] / 2)):
            continue
        hw = half_width(float(np.var(y, ddof=1)), len(y), LEVEL)
        if hw <= h:
            out[s] = {"runs": len(y), "planned": planned[s], "half_width": math.expm1(hw)}
    return out


def skip(store: Store, name: str, sets: dict[str, dict[str, Any]]) -> int:
    """Take the known ``sets``' pending runs off the plan and record them as not needed, in
    one transaction (refused, as a run's store is, once another driver holds the lease)."""
    if not sets:
        return 0
    pending = [(q, ",".join(sorted(t))) for q, t in store.pending(name)]
    at = datetime.now(UTC).isoformat(timespec="seconds")
    notes = [{"at": at, "set": s or "base", **v, "seqs": [q for q, k in pending if k == s]}
             for s, v in sorted(sets.items())]  # fmt: skip
    definition = store.campaign(name)
    info = {**definition.design_info}
    info["not_needed"] = [*info.get("not_needed", []), *notes]
    body = {k: v for k, v in definition.to_dict().items() if k not in ("name", "created_at")}
    body["design_info"] = info
    seqs = [q for n in notes for q in n["seqs"]]
    with store.tx() as db:
        if name in store.leases:
            store.check_lease(db, name)
        db.execute("UPDATE campaigns SET definition=? WHERE name=?", (json.dumps(body), name))
        db.executemany("DELETE FROM planned WHERE campaign=? AND seq=?", [(name, q) for q in seqs])
    return len(seqs)


def run_blocks(
    store: Store,
    definition: CampaignDef,
    runner: Runner,
    pending: list[tuple[int, RunSpec]],
    deadline: float | None,
    on_result: OnResult | None,
) -> None:
    """Run ``pending`` one replicate block at a time, skipping, before each block, the runs
    of the sets known by then."""
    name = definition.name
    block_of = dict(
        store.db.execute("SELECT seq, replicate FROM planned WHERE campaign=?", (name,)).fetchall()
    )
    for _, runs in groupby(pending, key=lambda r: block_of.get(r[0])):
        skip(store, name, known(store, definition))
        left = {q for q, _ in store.pending(name)}
        todo = [r for r in runs if r[0] in left]
        if deadline is not None and time.monotonic() >= deadline:
            return
        if todo:
            runner.run(store, todo, deadline, on_result)
    skip(store, name, known(store, definition))  # the last block's sets, for status
