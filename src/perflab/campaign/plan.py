"""Campaigns: a design of treatment sets, replicated, run in random interleaved order into
the store, resumable after any interruption."""

from __future__ import annotations

import re
import time
import warnings
from collections.abc import Callable, Iterator
from dataclasses import asdict, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from perflab.campaign import lease, running, stopping
from perflab.campaign.definition import CampaignDef
from perflab.campaign.designs import DESIGNS, Constraints
from perflab.campaign.runners import RUNNERS
from perflab.campaign.runners.base import OnResult, Runner
from perflab.campaign.running import Goal
from perflab.campaign.store import Store
from perflab.errors import PerflabError
from perflab.factors import snapshot
from perflab.factors.catalog import Catalog, load_catalogs
from perflab.factors.kinds.pybuild import BASELINE_INFO, at_baseline, design_baseline
from perflab.factors.labels import shown_all
from perflab.factors.treat import treat
from perflab.files import check_name
from perflab.run.measure import validate
from perflab.spec import RunSpec

#: ``--precision``'s sizing of a design: (sets, factors) -> (replicates, base, target).
Sizer = Callable[[list[list[str]], list[str]], tuple[int, RunSpec, float]]
DURATION_RE = re.compile(r"^(\d+(?:\.\d+)?)([smhd])$")
UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}
#: How many of the latest runs the status's ETA averages over.
STATUS_RECENT = 100


def parse_budget(text: str | None) -> tuple[int | None, float | None]:
    """``"200"`` -> (200 runs, None); ``"90m"`` -> (None, 5400 s). Zero is refused: a budget
    of nothing would be either useless or (as it once was) silently "no limit"."""
    if text is None:
        return None, None
    text = text.strip()
    runs: int | None = None
    seconds: float | None = None
    m = DURATION_RE.match(text)
    if text.isdigit():
        runs = int(text)
    elif m:
        seconds = float(m.group(1)) * UNITS[m.group(2)]
    else:
        raise PerflabError(f"--budget {text!r} is neither a number of runs nor a duration like 90m")
    if not (runs or seconds):
        raise PerflabError(f"--budget {text!r} must be more than zero")
    return runs, seconds


#: The most runs one campaign plans (at a second a run, 11 days of measuring).
MAX_PLANNED = 1_000_000


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
    sizer: Sizer | None = None,
    fastest: Goal | None = None,
) -> CampaignDef:
    """Plan a campaign and store it. Everything is checked first; on error nothing is stored.
    ``sizer`` (``--precision``) sees the design's sets over the expanded factors and returns
    the replicates, the base (its window) and the target they were planned for. ``fastest``
    (``--fastest``, ``running.asked``) is stored as the campaign's goal: ``campaign run``
    stops a set once it is out of the running without being told again."""
    check_name(name, "campaign name")
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
    validate(base)  # the target first, so a wrong target is not blamed on a factor
    d = DESIGNS.get(design)(design_options)
    factors = d.expand(factors, catalog)  # a sweep's ranges become one factor per level
    for f in factors:  # each factor alone must be a valid treatment
        validate(treat(base, [f], catalog))
    seed = int(seed if seed is not None else np.random.SeedSequence().generate_state(1)[0])
    rng = np.random.default_rng(seed)
    sets = d.generate(Constraints(factors, catalog), rng)
    precision = None
    if sizer is not None:
        replicates, base, precision = sizer(sets, factors)
        validate(base)
    # a design over the built interpreters' axes: its sets naming none run their defaults' variant
    py_base = design_baseline(catalog.factors[n].effects for n in _names(factors, catalog))
    for s in sets:
        at_baseline(treat(base, s, catalog), base, py_base)  # what the design could not know
    budget_runs, budget_s = parse_budget(budget)
    if len(sets) * replicates > MAX_PLANNED:  # the plan is built in memory, then stored
        raise PerflabError(
            f"{len(sets)} sets x {replicates} runs is more than a campaign plans at once "
            f"({MAX_PLANNED:,} runs)"
        )
    plan = interleave(sets, replicates, rng)
    if budget_runs is not None and budget_runs < len(plan):
        raise PerflabError(
            f"budget of {budget_runs} runs is smaller than the design needs: "
            f"{len(sets)} sets x {replicates} replicates = {len(plan)} runs"
        )
    definition = _definition(
        name, base, factors, catalogs, catalog,
        design=design, design_options=d.opts, replicates=replicates,
        design_info={**d.info, **({running.KEY: asdict(fastest)} if fastest else {}),
                     **({BASELINE_INFO: py_base} if py_base else {})},
        budget_runs=budget_runs, budget_s=budget_s, seed=seed, sets=len(sets),
        precision=precision,
    )  # fmt: skip
    store.create_campaign(definition, plan)
    return store.campaign(name)


def _definition(
    name: str, base: RunSpec, factors: list[str], catalogs: list[str], catalog: Catalog, **rest: Any
) -> CampaignDef:
    """A new campaign's definition: what every campaign stores (its base, factors, a snapshot
    of its catalogs, when it was made) and ``rest``, its design's own fields."""
    return CampaignDef(
        name=name,
        base=base.to_dict(),
        factors=factors,
        catalogs=catalogs,
        catalog_files=snapshot.take(catalogs, catalog),
        created_at=datetime.now(UTC).isoformat(timespec="seconds"),
        **rest,
    )


def _names(factors: list[str], catalog: Catalog) -> list[str]:
    """The catalog's factors among a design's (``name=level``; a command's labels are not)."""
    return [n for n in (f.partition("=")[0] for f in factors) if n in catalog.factors]


def planned_specs(store: Store, name: str) -> Iterator[tuple[int, RunSpec]]:
    """The pending runs of a campaign, as ready-to-measure specs, in plan order."""
    definition = store.campaign(name)
    if definition.imported:
        raise PerflabError(f"campaign {name!r} was imported: it has no plan to run")
    for path in snapshot.changed(definition.catalog_files):
        warnings.warn(
            f"{path} changed on disk since campaign {name!r} was created; its runs keep using "
            "the copy stored with the campaign",
            stacklevel=2,
        )
    catalog = snapshot.campaign_catalog(definition.catalog_files, definition.catalogs)
    base = RunSpec.from_dict(definition.base)
    # A plan of explicit runs (the zoo: each run its own target and workload).
    explicit = definition.design_info.get("plan")
    for seq, treatments in store.pending(name):
        if explicit is not None:
            spec = RunSpec.from_dict(explicit[seq]["spec"])
        else:
            spec = at_baseline(
                treat(base, treatments, catalog), base, definition.design_info.get(BASELINE_INFO)
            )
        yield seq, replace(spec, campaign=name)


def check_run(
    store: Store, name: str, runner: str, max_runs: int | None, **runner_options: Any
) -> Runner:
    """The runner for running campaign ``name``, once everything it can check is checked
    (before a progress bar is shown, so a refusal is one line)."""
    definition = store.campaign(name)
    if definition.imported:
        raise PerflabError(f"campaign {name!r} was imported: it has no plan to run")
    chosen = RUNNERS.get(runner)(**runner_options)
    if max_runs is not None and max_runs < 1:
        raise PerflabError(f"--max-runs must be at least 1 (got {max_runs})")
    lease.check_free(store, name, float(definition.base.get("timeout_s") or 300.0))
    return chosen


def run_campaign(
    store: Store,
    name: str,
    runner: str | Runner = "local",
    on_result: OnResult | None = None,
    max_runs: int | None = None,
    on_start: Callable[[], None] | None = None,
    on_skip: Callable[[int], None] | None = None,
    fastest: Goal | None = None,
    **runner_options: Any,
) -> dict[str, int]:
    """Run a campaign's pending runs (resuming where it stopped); returns the counts.

    Each finished run (ok, failed or timeout) is committed at once; a duration budget stops
    this invocation between runs. ``runner_options`` go to the runner (e.g. ``parsl_config``)
    unless it comes made by ``check_run``. ``on_start`` is called once the campaign's lease
    is held (a progress bar shown before it would precede another driver's refusal);
    ``on_skip(n)`` when n planned runs are taken off as not needed. ``fastest`` (``campaign
    run --fastest``, ``running.resolve``) is stored as the campaign's goal: from then on a
    set also stops once it is out of the running.
    """
    definition = store.campaign(name)
    if isinstance(runner, str):
        chosen = check_run(store, name, runner, max_runs, **runner_options)
    else:
        chosen = runner
    timeout_s = float(definition.base.get("timeout_s") or 300.0)
    with lease.held(store, name, timeout_s) as note:
        if note:
            warnings.warn(note, stacklevel=2)
        if on_start is not None:
            on_start()
        if fastest is not None:
            definition = stopping.record_goal(store, name, fastest)
        pending = list(planned_specs(store, name))
        if max_runs is not None:
            pending = pending[:max_runs]
        deadline = time.monotonic() + definition.budget_s if definition.budget_s else None
        if stopping.applies(definition):  # a target: each set stops once known
            stopping.run_blocks(store, definition, chosen, pending, deadline, on_result, on_skip)
        else:
            chosen.run(store, pending, deadline, on_result)
    return _counts(store, name)


def _counts(store: Store, name: str) -> dict[str, int]:
    """The store's counts and the planned runs skipped as not needed (``stopping``)."""
    return {**store.counts(name), "not_needed": stopping.not_needed(store.campaign(name))}


def list_campaigns(store: Store) -> list[dict[str, Any]]:
    """Every campaign in the store with its design and counts."""
    return [
        {"name": n, "design": store.campaign(n).design, **_counts(store, n)}
        for n in store.campaign_names()
    ]


def status(store: Store, name: str, target: float | None = None) -> dict[str, Any]:
    """Counts, an ETA from the mean duration of the latest finished runs (at most
    ``STATUS_RECENT``), the latest and best runs, and the precision per hour reached (against
    ``target``, else the campaign's own or ``reach.DEFAULT_TARGET``)."""
    definition = store.campaign(name)
    counts = _counts(store, name)
    # the latest runs' durations, not every record's: status costs the same at any size
    durations = _recent_durations(store, name, STATUS_RECENT)
    remaining = counts["planned"] - counts["done"]
    eta = (
        float(np.mean(durations)) * remaining
        if durations and remaining > 0
        else (0.0 if remaining == 0 else None)
    )
    best = store.best(name)
    return {
        "name": name,
        "created_at": definition.created_at,
        "target": definition.target,
        "design": definition.design,
        "factors": shown_all(definition.factors),  # label:NAME as NAME
        "counts": counts,
        "eta_s": eta,
        "best": dict(best) if best else None,
        "latest": [dict(r) for r in store.latest(name)],
        "precision": precision(store, definition, durations, target),
        "stopped": stopping.stopped(definition),  # sets whose runs were not needed, and why
        # the campaign's question: its effects, or which set is fastest (``--fastest``)
        "goal": "effects" if running.goal(definition) is None else "fastest",
        "out_of_running": stopping.spent(definition),
    }


def precision(
    store: Store,
    definition: CampaignDef,
    durations: list[float],
    target: float | None,
    more: list[list[str]] | None = None,
) -> dict[str, Any]:
    """``reach`` over the ok runs' metric (µs per task, else wall seconds: a command's) by
    treatment set, a run costing the mean of the latest ``durations``; ``more``: runs to
    count as planned beside the pending ones (a plan not yet stored). One pass over the
    runs' columns, no record parsed."""
    from perflab.analysis.reach import DEFAULT_TARGET, design_x, reach

    target = target or definition.precision or DEFAULT_TARGET
    rows = store.db.execute(
        "SELECT treatments, us_per_task, wall_s FROM runs WHERE campaign=? AND status='ok'",
        (definition.name,),
    ).fetchall()
    col = 1 if all(r[1] is not None for r in rows) else 2
    rows = [r for r in rows if r[col] is not None]
    y = np.array([r[col] for r in rows], float)
    factors = shown_all(definition.factors)  # as the records name them (label:NAME is NAME)
    x = design_x([r[0].split(",") for r in rows], factors)
    run_s = float(np.mean(durations)) if durations else None
    # planned and not yet run (a failed run is done: it is not planned again)
    todo = design_x([shown_all(t) for _, t in store.pending(definition.name)]
                    + [shown_all(t) for t in more or []], factors)  # fmt: skip
    return {
        "metric": ("us_per_task", "wall_s")[col - 1],
        **reach(y, x, factors, run_s, target, todo),
    }


def _recent_durations(store: Store, name: str, n: int) -> list[float]:
    """Seconds from start to end of the campaign's latest ``n`` runs (an index range of
    ``runs_started``: the cost grows neither with the campaign nor with the store)."""
    rows = store.db.execute(
        "SELECT started_at, json_extract(record, '$.ended_at') FROM runs WHERE campaign=? "
        "ORDER BY started_at DESC LIMIT ?",
        (name, n),
    )
    return [
        (datetime.fromisoformat(ended) - datetime.fromisoformat(started)).total_seconds()
        for started, ended in rows
        if started and ended
    ]


def create_ordered(
    store: Store,
    name: str,
    base: RunSpec,
    factors: list[str],
    sets: list[list[str]],
    catalogs: list[str] | None = None,
    info: dict[str, Any] | None = None,
) -> CampaignDef:
    """A campaign whose runs are exactly ``sets``, in this order (no design, no shuffle): for
    searches that plan and interleave their runs themselves, like ``perflab tune``."""
    check_name(name, "campaign name")
    if name in store.campaign_names():
        raise PerflabError(f"campaign {name!r} already exists in {store.path}")
    catalogs = [str(Path(c).resolve()) for c in catalogs or []]
    catalog = load_catalogs(catalogs)
    py_base = design_baseline(catalog.factors[n].effects for n in _names(factors, catalog))
    for s in sets:
        validate(at_baseline(treat(base, s, catalog), base, py_base))
    info = {**(info or {}), **({BASELINE_INFO: py_base} if py_base else {})}
    definition = _definition(
        name, base, factors, catalogs, catalog,
        design="ordered", design_info=info, sets=len({tuple(sorted(s)) for s in sets}),
    )  # fmt: skip
    store.create_campaign(definition, [(sorted(s), 0) for s in sets])
    return store.campaign(name)
