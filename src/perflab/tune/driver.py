"""``perflab tune``: the best-set search (tune/stages.py) on a real target. Each stage is a
campaign ``NAME.K-stage`` in the store, so a killed tune resumes where it stopped: the search
replays its decisions from the stored runs and measures only what is missing."""

from __future__ import annotations

import itertools
import json
import math
from collections.abc import Callable
from typing import Any

from perflab.campaign.designs.base import Constraints
from perflab.campaign.plan import create_ordered, run_campaign
from perflab.campaign.store import Store
from perflab.errors import PerflabError, Unanswerable
from perflab.factors.catalog import load_catalogs
from perflab.factors.labels import is_label, shown
from perflab.factors.treat import treat
from perflab.files import atomic_write, check_name, home_dir
from perflab.run.measure import validate
from perflab.spec import RunSpec
from perflab.tune.final import CLEAN_RUNS_PER_CANDIDATE, REDUCE_MIN
from perflab.tune.precise import FinalPlan
from perflab.tune.searches import DEFAULT_SEARCH, SEARCHES

#: Called after each stage with (stage name, reason, runs left, best ok run so far or None).
OnStage = Callable[[str, str, int, float | None], None]
#: Runs per candidate the search gets at the least.
SEARCH_MIN = 2


def short_budget(budget: int, candidates: int) -> str:
    """A note for a budget below what a clean set usually takes ("" when it is not)."""
    want = CLEAN_RUNS_PER_CANDIDATE * candidates
    if budget >= want:
        return ""
    return (
        f"--budget {budget} for {candidates} candidates: members may stay without being shown "
        f"needed (listed as such); a clean set usually takes about {want} runs "
        f"({CLEAN_RUNS_PER_CANDIDATE} per candidate, docs/tune.md)"
    )


def tune(
    store: Store,
    name: str,
    base: RunSpec,
    candidates: list[str],
    budget: int,
    catalogs: list[str] | None = None,
    seed: int = 0,
    pairs: int = 8,
    runner: str = "local",
    on_stage: OnStage | None = None,
    search: str = DEFAULT_SEARCH,
    precision: FinalPlan | None = None,
    **runner_options: Any,
) -> dict[str, Any]:
    """Search the best set of ``candidates`` for ``base`` within ``budget`` runs; returns the
    result (best set, its measured speed-up with CI, the stages and their reasons).
    ``search`` names a search of ``SEARCHES`` (``tune/searches/``); ``precision``
    (``tune.precise.plan_final``): final blocks sized for a target and stopped when known."""
    check_name(name, "tune name")
    kind = SEARCHES.get(search)
    catalog = load_catalogs(catalogs)
    for f in candidates:
        validate(treat(base, [f], catalog))
    cons = Constraints(candidates, catalog)
    # the search needs runs of its own beside the reduction and the final blocks
    least = next(
        b for b in itertools.count(1) if kind(candidates, cons, b, seed, pairs).search_runs
        >= SEARCH_MIN * len(candidates)
    )  # fmt: skip
    if budget < least:
        raise PerflabError(
            f"--budget {budget} is too small for {len(candidates)} candidates: give at least "
            f"{least} (a search of {SEARCH_MIN} runs per candidate, a reduction of at least "
            f"{REDUCE_MIN} runs, the final blocks)"
        )
    stage_no = iter(range(1, 10_000))
    failed: list[str] = []
    best_seen: list[float] = []

    errors: dict[tuple[str, ...], list[str]] = {}  # each set's failed runs' reasons

    def measure(sets: list[list[str]], stage: str, reason: str) -> list[float]:
        cname = f"{name}.{next(stage_no)}-{stage.replace(' ', '-')}"
        if cname in store.campaign_names():
            planned = [list(t) for _, t in store.planned(cname)]
            if planned != [sorted(s) for s in sets]:
                raise PerflabError(f"tune {name!r} was started with other options ({cname})")
        else:
            info = {"tune": name, "stage": stage, "reason": reason, "seed": seed}
            create_ordered(store, cname, base, candidates, sets, catalogs, info)
        run_campaign(store, cname, runner, None, None, **runner_options)
        ys = _values(store, cname, base.metric, failed, errors)
        best_seen.extend(y for y in ys if math.isfinite(y))
        if on_stage:
            best = min(best_seen) if best_seen else None
            on_stage(stage, reason, budget - _runs_so_far(store, name), best)
        return ys

    searcher = kind(candidates, cons, budget, seed, pairs)
    searcher.precision = precision
    result = _named(searcher.run(measure).to_dict(), [c for c in candidates if is_label(c)])
    result.update(
        name=name, target=base.target, metric=base.metric, failed_runs=failed, search=search
    )
    if result["measured"] is None:
        # the question (how much faster is the set than the base?) has no answer: say why
        why = result["measured_why"]
        side = () if why.startswith("the base") else tuple(result["best_set"])
        first = errors.get(side, [])
        result["measured_why"] = why + (f": {first[0]}" if first else "")
    atomic_write(home_dir() / f"tune-{name}.json", json.dumps(result, indent=1))
    if result["measured"] is None:
        raise Unanswerable(
            f"tune {name!r}: no speed-up measured: {result['measured_why']} "
            f"({len(failed)} of {result['runs']} runs failed; {home_dir() / f'tune-{name}.json'})"
        )
    return result


def _named(obj: Any, labels: list[str]) -> Any:
    """``obj`` (the result, JSON-like) with each of a command's ``label:NAME`` candidates
    named ``NAME``, as its runs' records and every other output name it."""
    if not labels:
        return obj
    if isinstance(obj, str):
        for raw in labels:
            obj = obj.replace(raw, shown(raw))
        return obj
    if isinstance(obj, dict):
        return {_named(k, labels): _named(v, labels) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return type(obj)(_named(v, labels) for v in obj)
    return obj


def _values(
    store: Store,
    cname: str,
    metric: str,
    failed: list[str],
    errors: dict[tuple[str, ...], list[str]],
) -> list[float]:
    """The stage's metric per planned run, in plan order; a failed run is NaN (no number:
    a search keeps its own penalty for it, nothing else uses it) and its reason is kept."""
    by_seq = {seq: rec for seq, rec in store.records_by_seq(cname)}
    out = []
    for seq, treatments in store.planned(cname):
        rec = by_seq.get(seq)
        v = getattr(rec, metric) if rec is not None and rec.status == "ok" else None
        if v is None or not math.isfinite(v) or v <= 0:
            why = f"{rec.status}: {rec.error}" if rec and rec.error else (
                rec.status if rec else "not run"
            )  # fmt: skip
            failed.append(f"{cname}#{seq}: {why}")
            errors.setdefault(tuple(sorted(treatments)), []).append(why)
            out.append(math.nan)
            continue
        # The search minimises: a rate (higher is better) is searched as its inverse.
        out.append(1.0 / float(v) if metric.endswith("_per_s") else float(v))
    return out


def _runs_so_far(store: Store, name: str) -> int:
    return sum(store.counts(c)["done"] for c in store.campaign_names() if c.startswith(f"{name}."))
