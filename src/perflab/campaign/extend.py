"""Growing a campaign: new factors (off in every earlier run) or another design, planned
against what is already measured; the campaign stays one campaign and one dataset."""

from __future__ import annotations

import dataclasses
import json
from datetime import UTC, datetime
from typing import Any

import numpy as np

from perflab.campaign.definition import CampaignDef
from perflab.campaign.designs import DESIGNS, Constraints
from perflab.campaign.plan import interleave
from perflab.campaign.store import Store
from perflab.errors import PerflabError
from perflab.factors import snapshot
from perflab.factors.catalog import Catalog
from perflab.factors.kinds.pybuild import BASELINE_INFO, at_baseline, design_baseline
from perflab.factors.treat import treat
from perflab.run.measure import validate
from perflab.spec import RunSpec


def extend_campaign(
    store: Store,
    name: str,
    factors: list[str] | None = None,
    design: str | None = None,
    design_options: dict[str, Any] | None = None,
    replicates: int = 1,
    seed: int | None = None,
) -> dict[str, Any]:
    """Grow campaign ``name`` by new factors or by another design; it stays one campaign,
    analysed as one dataset. Everything is checked first; on error nothing is stored.

    ``factors``: each new factor was off in every earlier run (recorded in the definition's
    ``extensions``); the new runs are every set already planned with one new factor added
    (exact X -> X+{t} pairs against what is measured). ``design``: its sets over the
    campaign's factors, less those already planned; it must keep the factors as they are (a
    sweep's levels instead of two-level factors conflicts). Returns the extension's record."""
    if bool(factors) == bool(design):
        raise PerflabError("campaign extend: give either --factors or --design (one at a time)")
    if replicates < 1:
        raise PerflabError(f"--replicates must be at least 1 (got {replicates})")
    old = growable(store, name)
    catalog = snapshot.campaign_catalog(old.catalog_files, old.catalogs)
    base = RunSpec.from_dict(old.base)
    planned = store.planned(name)
    known = {frozenset(t) for _, t in planned}
    seed = int(seed if seed is not None else np.random.SeedSequence().generate_state(1)[0])
    rng = np.random.default_rng(seed)
    info = dict(old.design_info)
    record: dict[str, Any] = {
        "at": datetime.now(UTC).isoformat(timespec="seconds"),
        "first_seq": planned[-1][0] + 1 if planned else 0,  # runs not needed leave gaps
        "replicates": replicates,
        "seed": seed,
    }
    if factors:
        if len(set(factors)) != len(factors):
            raise PerflabError("--factors names a factor twice")
        there = [f for f in factors if f in old.factors]
        if there:
            raise PerflabError(
                f"campaign extend: {', '.join(there)} already a factor of campaign {name!r}"
            )
        for f in factors:
            validate(treat(base, [f], catalog))
        _no_new_interpreter_axes(old, factors, catalog)
        new_factors = [*old.factors, *factors]
        cons = Constraints(new_factors, catalog)
        distinct = list(dict.fromkeys(tuple(sorted(t)) for _, t in planned))
        sets = [sorted({*x, f}) for x in distinct for f in factors if cons.ok({*x, f})]
        record.update(added_factors=factors, off_before=True, design="pairs")
    else:
        assert design is not None
        d = DESIGNS.get(design)(design_options)
        clash = f"campaign extend: design {design!r} conflicts with campaign {name!r}'s " + (
            f"design {old.design!r}"
        )
        try:
            expanded = d.expand(list(old.factors), catalog)
            new_factors = list(old.factors)
            made = d.generate(Constraints(new_factors, catalog), rng)
        except PerflabError as exc:
            raise PerflabError(f"{clash}: {exc}") from None
        if expanded != old.factors:
            raise PerflabError(f"{clash}: it would change the factors ({', '.join(old.factors)})")
        sets = [s for s in made if frozenset(s) not in known]
        record.update(design=design, design_options=d.opts, generated=len(made))
        if d.info.get("sequences"):  # more orders to walk: the paths' analysis uses them all
            info["sequences"] = [*old.sequences, *d.info["sequences"]]
    if not sets:
        raise PerflabError(
            f"campaign extend: nothing new to plan (every set is already planned in {name!r})"
        )
    for s in sets:  # catches anything the design could not know
        at_baseline(treat(base, s, catalog), base, info.get(BASELINE_INFO))
    rep0 = _max_replicate(store, name) + 1  # new blocks: they run later than every earlier one
    plan = [(s, rep0 + rep) for s, rep in interleave(sets, replicates, rng)]
    record.update(sets=len(sets), runs=len(plan))
    info["extensions"] = [*info.get("extensions", []), record]
    definition = dataclasses.replace(
        old, factors=new_factors, design_info=info, sets=old.sets + len(sets)
    )
    _store(store, definition, plan, len(planned))
    return record


def _no_new_interpreter_axes(old: CampaignDef, factors: list[str], catalog: Catalog) -> None:
    """Refuse built interpreters' axes (``py_gil`` …) added to a campaign whose runs ran
    perflab's own interpreter: each new pair would set a variant against that interpreter."""
    named = [f for f in factors if f.partition("=")[0] in catalog.factors]
    axes = [f for f in named if design_baseline([catalog.get(f.partition("=")[0]).effects])]
    if axes and BASELINE_INFO not in old.design_info:
        raise PerflabError(
            f"campaign extend: {axes[0]} picks a built interpreter, and campaign {old.name!r}'s "
            "runs ran perflab's own: plan a new campaign with it among its --factors"
        )


def growable(store: Store, name: str) -> CampaignDef:
    """Campaign ``name``'s definition, if it can grow (PerflabError if not)."""
    old = store.campaign(name)
    if old.imported:
        raise PerflabError(
            f"campaign {name!r} was imported: it has no base run to extend "
            "(import the new runs as a campaign of their own)"
        )
    if old.design_info.get("plan") is not None:
        raise PerflabError(f"campaign {name!r} is a plan of explicit runs: it cannot grow")
    return old


def extend_to_precision(
    store: Store, name: str, target: float, max_time_s: float, seed: int | None = None
) -> dict[str, Any]:
    """Grow campaign ``name`` by the runs of its sets that bring its widest effect to a 95 %
    half-width of ±``target``, planned from the runs stored (``reach.more_per_set``: the
    design repeated, each set in proportion to its runs), each round of them a new replicate
    block in random order. The target is stored as the campaign's (``status``, the report).
    A set stopped as out of the running (``campaign run --fastest``) gets no more runs: the
    record's ``left_out`` names it, and the half-width expected is predicted without it.
    PerflabError, nothing stored: no run-to-run variance measured (or exact data), the
    target reached already, no set left in the running, or the plan longer than
    ``max_time_s``. Returns the record."""
    from perflab.analysis.reach import more_per_set
    from perflab.analysis.sizing import duration
    from perflab.campaign.plan import status

    old = growable(store, name)
    p = status(store, name, target)["precision"]
    if p["why_not"]:
        raise PerflabError(f"campaign extend --precision: {p['why_not']}")
    more, hw = more_per_set(p)
    if not more or hw is None:
        raise PerflabError(f"campaign extend --precision: every effect of {name!r} is within "
                           f"±{target:.1%} already: nothing to plan")  # fmt: skip
    more, hw, left = _in_the_running(store, old, more, hw, p)
    n, run_s = sum(more.values()), p["run_s"] or 0.0
    wall, lo, hi = n * run_s, min(more.values()), max(more.values())
    each = f"{lo} each" if lo == hi else f"{lo}–{hi} each"
    widest = max(e["half_width"] or 0.0 for e in p["effects"])
    sets = f"{len(more)} set{'s' if len(more) > 1 else ''}"
    line = (f"{n} more runs ({sets}, {each}), ~{duration(wall)}, expected CI "
            f"±{hw:.1%} on the widest effect (predicted; now ±{widest:.1%})")  # fmt: skip
    if wall > max_time_s:
        raise PerflabError(f"±{target:.1%} would take ~{duration(wall)} more here ({n} more "
                           f"runs of {sets}), more than --max-time "
                           f"{duration(max_time_s)}")  # fmt: skip
    seed = int(seed if seed is not None else np.random.SeedSequence().generate_state(1)[0])
    rng = np.random.default_rng(seed)
    rep0 = _max_replicate(store, name) + 1
    plan: list[tuple[list[str], int]] = []
    for r in range(max(more.values())):
        due = [k for k, m in more.items() if m > r]
        plan += [([] if due[i] == "base" else due[i].split(","), rep0 + r)
                 for i in rng.permutation(len(due))]  # fmt: skip
    seqs = [q for q, _ in store.planned(name)]
    planned = len(seqs)
    first = max(seqs, default=-1) + 1  # runs not needed (``stopping``) leave gaps
    record = {"at": datetime.now(UTC).isoformat(timespec="seconds"), "first_seq": first,
              "design": "replicates", "precision": target, "sets": len(more), "runs": n,
              "seed": seed, "wall_s_predicted": wall, "expected_half_width": hw,
              "plan": line, **left}  # fmt: skip
    info = {**old.design_info, "extensions": [*old.design_info.get("extensions", []), record]}
    _store(store, dataclasses.replace(old, design_info=info, precision=target), plan, planned)
    return record


def _in_the_running(
    store: Store, old: CampaignDef, more: dict[str, int], hw: float, p: dict[str, Any]
) -> tuple[dict[str, int], float, dict[str, Any]]:
    """``more`` (set -> runs to add, as ``reach`` (``p``: its result) names sets) without the
    sets stopped as out of the running, the half-width then expected on the widest effect
    (predicted with only the kept sets' runs added), and what the record says of the sets left out
    (``left_out``, ``left_out_line``; nothing when none was). PerflabError when no set in
    need of runs is left in the running."""
    from perflab.campaign import plan, stopping

    out = {n["set"] for n in old.design_info.get("not_needed", [])
           if n.get("why") == "out of the running"}  # fmt: skip
    gone = sorted(s for s in more if (stopping.set_key(s.split(",")) or "base") in out)
    if not gone:
        return more, hw, {}
    kept = {s: m for s, m in more.items() if s not in gone}
    why = (f"left out {len(gone)} set{'s' if len(gone) > 1 else ''} stopped as out of the "
           f"running, clearly slower than the best (campaign run --fastest): "
           f"{', '.join(gone)}")  # fmt: skip
    if not kept:
        raise PerflabError(f"campaign extend --precision: every set that needs more runs is "
                           f"out of the running in {old.name!r} ({', '.join(gone)}): nothing "
                           "to plan")  # fmt: skip
    rows = [[] if s == "base" else s.split(",") for s, m in kept.items() for _ in range(m)]
    run_s = [p["run_s"]] if p["run_s"] else []
    then = plan.precision(store, old, run_s, p["target"], rows)
    ends = [e.get("half_width_at_plan_end") for e in then.get("effects", [])]
    hw = max((e for e in ends if e is not None), default=hw)
    return kept, hw, {"left_out": gone, "left_out_line": why}


def _max_replicate(store: Store, name: str) -> int:
    """The highest replicate block planned for a campaign (-1: none)."""
    row = store.db.execute(
        "SELECT COALESCE(MAX(replicate), -1) FROM planned WHERE campaign=?", (name,)
    ).fetchone()
    return int(row[0])


def _store(
    store: Store, definition: CampaignDef, plan: list[tuple[list[str], int]], planned_before: int
) -> None:
    """Replace the campaign's definition and append ``plan`` after its planned runs, in one
    transaction; refused if another extension landed since ``planned_before`` was counted."""
    name = definition.name
    with store.tx() as db:
        n = db.execute("SELECT COUNT(*) FROM planned WHERE campaign=?", (name,)).fetchone()[0]
        if n != planned_before:
            raise PerflabError(f"campaign {name!r} changed while extending it: try again")
        top = db.execute(
            "SELECT COALESCE(MAX(seq), -1) FROM planned WHERE campaign=?", (name,)
        ).fetchone()[0]
        body = definition.to_dict()
        for k in ("name", "created_at"):  # columns of their own
            body.pop(k)
        db.execute("UPDATE campaigns SET definition=? WHERE name=?", (json.dumps(body), name))
        db.executemany(
            "INSERT INTO planned VALUES (?, ?, ?, ?)",
            [(name, top + 1 + i, json.dumps(t), rep) for i, (t, rep) in enumerate(plan)],
        )
