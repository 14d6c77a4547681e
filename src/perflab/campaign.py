"""Campaigns: a design of treatment sets, replicated, run in random interleaved order into
the store, resumable after any interruption."""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterator
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from perflab.designs import DESIGNS, Constraints
from perflab.errors import PerflabError
from perflab.factors.catalog import NAME_RE, Catalog, load_catalogs, treat
from perflab.measure import COMMAND_TARGET, validate
from perflab.record import RunRecord
from perflab.spec import RunSpec
from perflab.store import Store

DURATION_RE = re.compile(r"^(\d+(?:\.\d+)?)([smhd])$")
UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


def parse_budget(text: str | None) -> tuple[int | None, float | None]:
    """``"200"`` -> (200 runs, None); ``"90m"`` -> (None, 5400 s)."""
    if not text:
        return None, None
    if text.isdigit():
        return int(text), None
    m = DURATION_RE.match(text.strip())
    if not m:
        raise PerflabError(f"--budget {text!r} is neither a number of runs nor a duration like 90m")
    return None, float(m.group(1)) * UNITS[m.group(2)]


def interleave(
    sets: list[list[str]], replicates: int, rng: np.random.Generator
) -> list[tuple[list[str], int]]:
    """Each replicate is a fresh random order of all sets, so drift spreads over every set and
    no set's replicates run back to back (a block boundary never repeats a set)."""
    plan: list[tuple[list[str], int]] = []
    for rep in range(replicates):
        order = [sets[i] for i in rng.permutation(len(sets))]
        if plan and len(order) > 1 and order[0] == plan[-1][0]:
            order[0], order[1] = order[1], order[0]
        plan += [(s, rep) for s in order]
    return plan


def _catalog(definition: dict[str, Any]) -> Catalog:
    return load_catalogs(definition.get("catalogs", []))


def create_campaign(
    store: Store,
    name: str,
    base: RunSpec,
    factors: list[str],
    design: str,
    design_options: dict[str, Any] | None = None,
    replicates: int = 1,
    budget: str | None = None,
    catalogs: list[str] | None = None,
    seed: int | None = None,
) -> dict[str, Any]:
    """Plan a campaign and store it. Everything is checked first; on error nothing is stored."""
    if not NAME_RE.match(name):
        raise PerflabError(f"campaign name {name!r}: use letters, digits, _ . -")
    if name in store.campaign_names():
        raise PerflabError(f"campaign {name!r} already exists in {store.path}")
    if replicates < 1:
        raise PerflabError(f"--replicates must be at least 1 (got {replicates})")
    if not factors:
        raise PerflabError("a campaign needs at least one factor (--factors a,b,c)")
    if len(set(factors)) != len(factors):
        raise PerflabError("--factors names a factor twice")
    catalogs = [str(Path(c).resolve()) for c in catalogs or []]
    catalog = load_catalogs(catalogs)
    target = COMMAND_TARGET if base.command else base.target
    for f in factors:  # each factor alone must be a valid treatment
        validate(_as_target(treat(base, [f], catalog), target))
    seed = int(seed if seed is not None else np.random.SeedSequence().generate_state(1)[0])
    rng = np.random.default_rng(seed)
    d = DESIGNS.get(design)(design_options)
    sets = d.generate(Constraints(factors, catalog), rng)
    for s in sets:
        treat(base, s, catalog)  # catches anything the design could not know
    budget_runs, budget_s = parse_budget(budget)
    plan = interleave(sets, replicates, rng)
    if budget_runs is not None and budget_runs < len(plan):
        raise PerflabError(
            f"budget of {budget_runs} runs is smaller than the design needs: "
            f"{len(sets)} sets x {replicates} replicates = {len(plan)} runs"
        )
    definition = {
        "base": base.to_dict(),
        "factors": factors,
        "catalogs": catalogs,
        "design": design,
        "design_options": d.opts,
        "design_info": d.info,
        "replicates": replicates,
        "budget_runs": budget_runs,
        "budget_s": budget_s,
        "seed": seed,
        "sets": len(sets),
    }
    store.create_campaign(name, definition, plan, datetime.now(UTC).isoformat(timespec="seconds"))
    return store.campaign(name)


def _as_target(spec: RunSpec, target: str) -> RunSpec:
    return replace(spec, target=target) if spec.command else spec


def planned_specs(store: Store, name: str) -> Iterator[tuple[int, RunSpec]]:
    """The pending runs of a campaign, as ready-to-measure specs, in plan order."""
    definition = store.campaign(name)
    catalog = _catalog(definition)
    base = RunSpec.from_dict(definition["base"])
    for seq, treatments in store.pending(name):
        spec = treat(base, treatments, catalog)
        spec.campaign = name
        yield seq, spec


Progress = Callable[[RunRecord, int, int], None]


def run_campaign(
    store: Store,
    name: str,
    runner: str = "local",
    parsl_config: str | None = None,
    on_result: Progress | None = None,
    max_runs: int | None = None,
) -> dict[str, int]:
    """Run a campaign's pending runs (resuming where it stopped); returns the counts.

    Each finished run (ok, failed or timeout) is committed at once; a duration budget stops
    this invocation between runs.
    """
    definition = store.campaign(name)
    pending = list(planned_specs(store, name))
    if max_runs is not None:
        pending = pending[:max_runs]
    budget_s = definition.get("budget_s")
    deadline = time.monotonic() + budget_s if budget_s else None
    if runner == "local":
        from perflab.runners.local import run_local

        run_local(store, pending, deadline, on_result)
    elif runner == "parsl":
        if not parsl_config:
            raise PerflabError("--runner parsl needs --parsl-config FILE")
        from perflab.runners.parsl_runner import run_parsl

        run_parsl(store, pending, parsl_config, deadline, on_result)
    else:
        raise PerflabError(f"unknown runner {runner!r} (runners: local, parsl)")
    return store.counts(name)


def status(store: Store, name: str) -> dict[str, Any]:
    """Counts, an ETA from the mean duration of finished runs, the latest and best runs."""
    definition = store.campaign(name)
    counts = store.counts(name)
    records = store.records(name)
    durations = [
        (datetime.fromisoformat(r.ended_at) - datetime.fromisoformat(r.started_at)).total_seconds()
        for r in records
        if r.ended_at
    ]
    remaining = counts["planned"] - counts["done"]
    eta = (
        float(np.mean(durations)) * remaining
        if durations and remaining > 0
        else (0.0 if remaining == 0 else None)
    )
    best = store.best(name)
    return {
        "name": name,
        "created_at": definition["created_at"],
        "target": definition["base"]["command"] or definition["base"]["target"],
        "design": definition["design"],
        "factors": definition["factors"],
        "counts": counts,
        "eta_s": eta,
        "best": dict(best) if best else None,
        "latest": [dict(r) for r in store.latest(name)],
    }
