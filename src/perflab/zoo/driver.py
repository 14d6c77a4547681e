"""A zoo from start to end: plan it (or resume it), run its rounds — while a METG search goes
on, each round plans the search's next levels — and tabulate it. ``perflab zoo``, ``perflab
metg`` and ``perflab.api.zoo`` call :func:`run_zoo`."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from perflab.campaign.plan import run_campaign
from perflab.campaign.store import Store
from perflab.errors import PerflabError
from perflab.zoo.suite import (
    ZOO_DESIGN,
    ZooConfig,
    create_zoo,
    default_name,
    plan_items,
    scoreboard,
    slots_of,
)

#: Runs what is planned of a campaign; returns its counts (``run_campaign`` by default; the
#: CLI's shows a progress bar).
Round = Callable[[Store, str], dict[str, int]]


def run_zoo(
    store: Store,
    cfg: ZooConfig,
    name: str | None = None,
    prefix: str = "zoo",
    seed: int | None = None,
    threshold: float = 0.5,
    basis: str = "peak",
    run_round: Round | None = None,
    on_levels: Callable[[list[dict[str, Any]]], None] | None = None,
    precision: float | None = None,
    max_time_s: float = 3600.0,
    say: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """Run zoo ``name`` (default: ``prefix`` and a time stamp; an existing zoo resumes) and
    return its ``name``, ``counts``, scoreboard ``table`` and ``rows``. ``on_levels`` is
    told the items of each new METG round before they run. ``precision``: then each
    measurement is repeated until its interval is within ±precision (``zoo.precise``;
    ``say`` prints the plan), within ``max_time_s``; the result's ``precision`` says what
    was reached."""
    from perflab.analysis.metg import BASES
    from perflab.zoo.adaptive import next_round

    if basis not in BASES or not 0 < threshold < 1:
        raise PerflabError(f"--basis must be one of {', '.join(BASES)}; --efficiency in (0, 1)")
    name = name or default_name(prefix)
    if name not in store.campaign_names():
        if precision is not None:  # a target out of reach is refused before the pilot
            _foresee(cfg, precision, max_time_s, say)
        create_zoo(store, name, cfg, seed)
    elif store.campaign(name).design != ZOO_DESIGN:
        raise PerflabError(f"campaign {name!r} exists and is not a zoo")
    run = run_round or (lambda s, n: run_campaign(s, n))
    counts = run(store, name)
    stored = store.campaign(name).design_options
    # a zoo made before the search existed keeps its fixed levels
    while stored.get("adaptive", False) and "metg" in stored["kinds"]:
        items = next_round(store, name, threshold, basis)
        if not items:
            break
        if on_levels:
            on_levels(items)
        counts = run(store, name)
    reached = None
    if precision is not None:
        from perflab.zoo.precise import run_rounds

        reached = run_rounds(store, name, precision, max_time_s, run, say)
        counts = store.counts(name)
    table, rows = scoreboard(store, name, threshold, basis)
    out = {"name": name, "counts": counts, "table": table, "rows": rows}
    return {**out, "precision": reached} if reached else out


def _foresee(
    cfg: ZooConfig, precision: float, max_time_s: float, say: Callable[[str], None] | None
) -> None:
    """What ``--precision`` costs as far as it is known before the pilot (``zoo.foresee``):
    printed, or bad input when out of reach."""
    from perflab.files import perflab_home
    from perflab.zoo.adaptive import MAX_ROUNDS
    from perflab.zoo.foresee import before_pilot

    searching = cfg.adaptive and "metg" in cfg.kinds
    search = MAX_ROUNDS * len(cfg.targets) * cfg.replicates if searching else 0
    line = before_pilot(plan_items(cfg), cfg.replicates, precision, max_time_s, cfg.timeout_s,
                        slots_of(cfg.workers), perflab_home(), search)  # fmt: skip
    if say:
        say(line)
