"""Plan, run and tabulate the zoo: METG sweeps and DAG patterns across engines.

A zoo (or a single ``perflab metg``) is a campaign of explicit runs (``design = "zoo"``):
each planned run is a (target, workload, parameters) of its own, kept in the definition's
``design_info["plan"]``; replicates are interleaved in a fresh random order each round, and
``run_campaign`` runs it like any campaign (each run committed when it finishes; running it
again resumes).
"""

from __future__ import annotations

import dataclasses
import math
import os
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import numpy as np

from perflab.campaign.definition import CampaignDef
from perflab.campaign.store import Store
from perflab.engines import ENGINES
from perflab.errors import PerflabError
from perflab.files import check_name
from perflab.run.measure import validate
from perflab.spec import RunSpec


def default_targets() -> list[str]:
    """Engines of the standard zoo: every registered engine that expresses task dependencies
    (``Engine.dependencies``), since the zoo's DAG rows need them; a new engine that declares
    them joins the zoo with no list to edit."""
    return [name for name, engine in ENGINES.items() if engine.dependencies is not None]


#: First task sizes of a METG search (µs), largest first as Task Bench lists them; the search
#: then steps outwards and bisects (``zoo.adaptive``) until the 50% crossing is bracketed.
DEFAULT_LEVELS = (10000.0, 1000.0, 100.0)
METG_WORKLOAD = "compute"
#: Work per task of the DAG patterns (µs): a chain of empty tasks measures pure per-dependency
#: latency; the others get work so their makespan has an ideal to compare with.
DAG_TASK_US = {"chain": 0.0, "fan": 1000.0, "tree": 1000.0, "stencil_1d": 1000.0}
#: Recipes of the zoo's workflow rows (WfCommons).
DEFAULT_RECIPES = ("montage", "epigenomics", "blast")
#: The design name of a zoo campaign (its plan is explicit runs, not treatment sets).
ZOO_DESIGN = "zoo"


#: Most tasks in one METG run (keeps a point at the smallest sizes within a minute).
MAX_TASKS = 20_000


def metg_tasks(task_us: float, slots: int, point_s: float, least: int) -> int:
    """Tasks for one METG point: ideal time ≥ ``point_s`` on ``slots`` cores, at least
    ``least``, at most ``MAX_TASKS``."""
    want = math.ceil(point_s * slots * 1e6 / max(task_us, 1e-3))
    return int(min(MAX_TASKS, max(least, want)))


def slots_of(workers: int | None) -> int:
    return min(workers or os.cpu_count() or 1, os.cpu_count() or 1)


@dataclass
class ZooConfig:
    """What a zoo measures. ``kinds``: ``metg`` (granularity sweep), ``chain``, ``fan``."""

    targets: list[str] = field(default_factory=default_targets)
    kinds: list[str] = field(default_factory=lambda: ["metg", "chain", "fan"])
    levels: list[float] = field(default_factory=lambda: list(DEFAULT_LEVELS))
    replicates: int = 2
    #: Fewest tasks of a METG run; each point gets enough for ``point_s`` of ideal time.
    metg_tasks: int = 100
    point_s: float = 0.5
    #: Search for the METG crossing after the first levels (False: the levels only).
    adaptive: bool = True
    dag_tasks: int = 1000
    #: Work per DAG task (µs); None: ``DAG_TASK_US`` per pattern.
    dag_task_us: float | None = None
    workers: int | None = None
    kernel: str = "hash"
    timeout_s: float = 300.0
    extra_params: dict[str, Any] = field(default_factory=dict)
    #: Workflow rows (kind ``wfcommons``): each recipe at each size, one seed.
    recipes: list[str] = field(default_factory=lambda: list(DEFAULT_RECIPES))
    wf_sizes: list[int] = field(default_factory=lambda: [100, 1000])
    wf_seed: int = 1
    #: Mean task runtime of a workflow after scaling its trace runtimes (ms).
    wf_task_ms: float = 10.0


KINDS = ("metg", "chain", "fan", "tree", "stencil_1d", "wfcommons")


def plan_items(cfg: ZooConfig) -> list[dict[str, Any]]:
    """One spec per distinct measurement (before replication)."""
    if cfg.replicates < 1:
        raise PerflabError(f"--runs must be at least 1 (got {cfg.replicates})")
    if not cfg.targets:
        raise PerflabError("the zoo needs at least one target")
    for k in cfg.kinds:
        if k not in KINDS:
            raise PerflabError(f"zoo workload {k!r} is not one of {', '.join(KINDS)}")
    if "wfcommons" in cfg.kinds and not (cfg.recipes and cfg.wf_sizes):
        raise PerflabError("the workflow rows need at least one recipe and one size")
    if "metg" in cfg.kinds and len(cfg.levels) < 2:
        raise PerflabError("a METG sweep needs at least two task sizes (--levels)")
    if not cfg.point_s > 0 or cfg.metg_tasks < 1:
        raise PerflabError("--point-s must be positive and --metg-tasks at least 1")
    if any(not level > 0 for level in cfg.levels):
        raise PerflabError("METG task sizes (--levels) must be positive")
    items = []
    for target in cfg.targets:
        ENGINES.get(target)  # unknown target: bad input before anything is stored
        opts = {"workers": cfg.workers} if cfg.workers else {}
        for kind in cfg.kinds:
            if kind == "wfcommons":
                items += [_workflow_item(cfg, target, opts, r, n) for r in cfg.recipes
                          for n in cfg.wf_sizes]  # fmt: skip
            elif kind == "metg":
                for level in cfg.levels:
                    n = metg_tasks(level, slots_of(cfg.workers), cfg.point_s, cfg.metg_tasks)
                    items.append(_item(cfg, target, METG_WORKLOAD, n, opts, level))
            else:
                us = cfg.dag_task_us if cfg.dag_task_us is not None else DAG_TASK_US[kind]
                items.append(_item(cfg, target, kind, cfg.dag_tasks, opts, us))
    for it in items:
        validate(RunSpec.from_dict(it["spec"]))
    return items


def _item(
    cfg: ZooConfig, target: str, workload: str, tasks: int, opts: dict[str, Any], task_us: float
) -> dict[str, Any]:
    params = {"task_us": task_us, "kernel": cfg.kernel, **cfg.extra_params}
    spec = RunSpec(
        target=target,
        workload=workload,
        tasks=tasks,
        warmup=min(20, tasks),
        params=params,
        engine_options=dict(opts),
        timeout_s=cfg.timeout_s,
    )
    kind = "metg" if workload == METG_WORKLOAD else workload
    return {"kind": kind, "spec": spec.to_dict()}


def _workflow_item(
    cfg: ZooConfig, target: str, opts: dict[str, Any], recipe: str, size: int
) -> dict[str, Any]:
    """A workflow run: the whole instance is one counted batch (tasks ≥ its size), after a
    warm-up of a few independent kernel tasks."""
    params = {"recipe": recipe, "size": size, "seed": cfg.wf_seed, "task_ms": cfg.wf_task_ms}
    spec = RunSpec(
        target=target,
        workload="wfcommons",
        tasks=2 * size,
        warmup=4,
        params={**params, "kernel": cfg.kernel},
        engine_options=dict(opts),
        timeout_s=cfg.timeout_s,
    )
    return {"kind": "wfcommons", "spec": spec.to_dict()}


def create_zoo(store: Store, name: str, cfg: ZooConfig, seed: int | None = None) -> CampaignDef:
    """Check and store a zoo's plan (nothing runs). Errors leave nothing stored."""
    check_name(name, "zoo name")
    if name in store.campaign_names():
        raise PerflabError(f"campaign {name!r} already exists in {store.path}")
    items = plan_items(cfg)
    seed = int(seed if seed is not None else np.random.SeedSequence().generate_state(1)[0])
    rng = np.random.default_rng(seed)
    order: list[tuple[int, int]] = []
    for rep in range(cfg.replicates):  # each round a fresh random order of every item
        order += [(int(i), rep) for i in rng.permutation(len(items))]
    plan = [{**items[i], "replicate": rep} for i, rep in order]
    definition = CampaignDef(
        name=name,
        factors=[],
        design=ZOO_DESIGN,
        base=plan[0]["spec"],
        design_options=dataclasses.asdict(cfg),
        design_info={"plan": plan},
        replicates=cfg.replicates,
        seed=seed,
        sets=len(items),
        created_at=datetime.now(UTC).isoformat(timespec="seconds"),
    )
    store.create_campaign(definition, [([], p["replicate"]) for p in plan])
    return store.campaign(name)


def scoreboard(
    store: Store, name: str, threshold: float = 0.5, basis: str = "peak"
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """A zoo's table (``analysis.zoo.zoo_table``) and its flat rows, from the store."""
    from perflab.analysis.zoo import rows_for_table, zoo_table
    from perflab.zoo.frame import zoo_frame

    definition = store.campaign(name)
    if definition.design != ZOO_DESIGN:
        raise PerflabError(f"campaign {name!r} is not a zoo (design {definition.design!r})")
    search = definition.design_info.get("metg_search") or {}
    limits = {t: s["reason"] for t, s in search.items() if s.get("stopped")}
    table = zoo_table(zoo_frame(store.records(name)), threshold, basis, limits)
    return table, rows_for_table(table)


def default_name(prefix: str) -> str:
    return f"{prefix}-{datetime.now(UTC).strftime('%Y%m%d-%H%M%S')}"
