"""perflab's Python API: each CLI verb's work as a function a notebook can call (the CLI
parses options, calls one of these and prints what it returns; docs/python-api.md shows a
session). ``store`` is a ``Store``, a path to its SQLite file, or None for the default
store (``.perflab/perflab.db``). Each function imports its stage's modules on use, so
``import perflab.api`` starts nothing. Bad input raises ``PerflabError`` before anything
is stored or started.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from perflab.errors import PerflabError
from perflab.spec import RunSpec

if TYPE_CHECKING:
    from perflab.analysis.analyze import Analysis
    from perflab.campaign.runners.base import Runner
    from perflab.campaign.store import Store
    from perflab.compare.gate import Comparison, Side
    from perflab.run.record import RunRecord
    from perflab.zoo.suite import ZooConfig


def open_store(store: Store | str | Path | None = None) -> Store:
    """The store ``store`` names (a Store is returned as it is)."""
    from perflab.campaign.store import Store

    return store if isinstance(store, Store) else Store(store)


def treated(
    spec: RunSpec, treat: str | list[str] = "", catalogs: list[str] | None = None
) -> RunSpec:
    """``spec`` with a treatment set applied (``"a,b=LEVEL"`` or a list), from the built-in
    catalog and ``catalogs``; the spec itself when there is nothing to apply."""
    if not treat and not catalogs:
        return spec
    from perflab.factors.catalog import load_catalogs
    from perflab.factors.treat import treat as apply

    return apply(spec, treat, load_catalogs(list(catalogs or [])))


def run(
    spec: RunSpec,
    treat: str | list[str] = "",
    catalogs: list[str] | None = None,
    runs: int = 1,
    on_run: Callable[[int, int], None] | None = None,
) -> list[RunRecord]:
    """``perflab run``: ``runs`` fresh measurements of ``spec`` with ``treat`` applied, each
    in its own supervised process tree; ``on_run(i, runs)`` is called before run i. A failed
    run is a record with its status and error, not an exception."""
    from perflab.run.measure import measure_repeated, validate

    spec = treated(spec, treat, catalogs)
    validate(spec)
    return measure_repeated(spec, runs, on_run)


def summary(records: list[RunRecord], metric: str = "us_per_task") -> dict[str, Any]:
    """Median, mean and CV of the ok records' ``metric`` (``perflab run --runs K``)."""
    from perflab.run.measure import summarize

    return summarize(records, metric)


def campaign_create(
    name: str,
    spec: RunSpec,
    factors: list[str],
    design: str = "random",
    design_options: dict[str, Any] | None = None,
    runs: int = 1,
    budget: str | None = None,
    catalogs: list[str] | None = None,
    seed: int | None = None,
    store: Store | str | Path | None = None,
    fastest: tuple[float, float] | None = None,
) -> dict[str, Any]:
    """``perflab campaign create``: plan campaign ``name`` (``runs`` runs of each set the
    design chooses over ``factors``; ``fastest``: ``(threshold, alpha)`` of ``--fastest``)
    and store it; nothing runs yet. Returns the definition with its ``counts``."""
    from perflab.campaign.plan import create_campaign
    from perflab.campaign.running import asked

    goal = None if fastest is None else asked(True, *fastest)
    st = open_store(store)
    c = create_campaign(
        st, name, spec, factors, design, design_options, runs, budget, catalogs, seed,
        fastest=goal,
    )  # fmt: skip
    return {**c.to_dict(), "counts": st.counts(name)}


def campaign_extend(
    name: str,
    factors: list[str] | None = None,
    design: str | None = None,
    design_options: dict[str, Any] | None = None,
    runs: int = 1,
    seed: int | None = None,
    store: Store | str | Path | None = None,
) -> dict[str, Any]:
    """``perflab campaign extend``: grow campaign ``name`` by new ``factors`` (each planned
    set again with each one added) or another ``design``; returns what was planned and the
    campaign's ``counts``."""
    from perflab.campaign.extend import extend_campaign

    st = open_store(store)
    planned = extend_campaign(st, name, factors or [], design, design_options or {}, runs, seed)
    return {**planned, "counts": st.counts(name)}


def campaign_run(
    name: str,
    runner: str | Runner = "local",
    max_runs: int | None = None,
    on_result: Callable[..., Any] | None = None,
    store: Store | str | Path | None = None,
    **runner_options: Any,
) -> dict[str, int]:
    """``perflab campaign run``: run (or resume) campaign ``name``'s pending runs, each
    committed when it finishes; returns the counts. ``runner_options`` go to the runner
    (``parsl_config`` for ``runner="parsl"``); ``on_start``, ``on_skip`` and ``fastest`` go
    to ``campaign.plan.run_campaign``."""
    from perflab.campaign.plan import run_campaign

    return run_campaign(open_store(store), name, runner, on_result, max_runs, **runner_options)


def campaign_check_run(
    name: str,
    runner: str = "local",
    max_runs: int | None = None,
    store: Store | str | Path | None = None,
    **runner_options: Any,
) -> Runner:
    """The runner ``campaign_run`` would use, once everything that can be checked before a
    run starts is checked (a PerflabError otherwise): a CLI shows progress only after it."""
    from perflab.campaign.plan import check_run

    return check_run(open_store(store), name, runner, max_runs, **runner_options)


def campaign_status(name: str, store: Store | str | Path | None = None) -> dict[str, Any]:
    """``perflab campaign status``: counts, ETA, the latest and the fastest runs."""
    from perflab.campaign.plan import status

    return status(open_store(store), name)


def campaigns(store: Store | str | Path | None = None) -> list[dict[str, Any]]:
    """``perflab campaign list``: every campaign of the store with its design and counts."""
    from perflab.campaign.plan import list_campaigns

    return list_campaigns(open_store(store))


def analyze(
    source: str,
    without: list[str] | None = None,
    from_set: list[str] | None = None,
    to_set: list[str] | None = None,
    order: list[str] | None = None,
    metric: str | None = None,
    seed: int = 0,
    store: str | Path | None = None,
) -> Analysis:
    """``perflab analyze``: the analysis of ``source`` (a campaign in ``store``, or a CSV)
    on ``metric`` (None: the study's own: a command's ``wall_s`` unless it named another,
    else ``us_per_task``)."""
    from perflab.analysis import analyze as analyse
    from perflab.campaign.source import open_source

    src = open_source(source, None if store is None else str(store), metric)
    a = analyse(src.dataset(), without, from_set, to_set, order, seed)
    a.result["shared_hosts"] = src.shared_hosts  # runs that overlapped on one host
    return a


def report(
    source: str,
    store: str | Path | None = None,
    out_dir: str | Path = "report",
    without: list[str] | None = None,
    metric: str | None = None,
    before_after: list[tuple[str, str | None]] | None = None,
) -> Path:
    """``perflab report -o DIR``: every figure of ``source`` (a campaign by name, or a
    dataset CSV) in one offline page; returns ``out_dir/report.html``."""
    from perflab.campaign.source import open_source
    from perflab.report.html import write_report

    src = open_source(source, None if store is None else str(store), metric)
    return write_report(src.dataset(), src.runs, out_dir, source, without, before_after,
                        src.shared_hosts, src.precision, src.stopped)  # fmt: skip


#: The name this function had first (``perflab.report_on``).
report_on = report


def export(
    name: str,
    path: str | Path | None = None,
    fmt: str = "csv",
    deltas: bool = False,
    metric: str | None = None,
    store: Store | str | Path | None = None,
) -> Path:
    """``perflab export``: campaign ``name``'s runs as a dataset file (CSV or parquet;
    default ``NAME.csv``), or with ``deltas`` its pairs of runs X, X+{t} (CSV, default
    ``NAME.deltas.csv``), written whole or not at all; returns the path."""
    from perflab.campaign.dataset import export as write_runs
    from perflab.campaign.source import export_deltas

    if not deltas:
        return write_runs(open_store(store), name, path or f"{name}.{fmt}", fmt)
    if fmt != "csv":
        raise PerflabError("--deltas: the deltas are written as CSV only (drop --format)")
    return export_deltas(None if store is None else str(store), name, path, metric)


def import_dataset(
    csv_file: str | Path,
    name: str,
    metric: str | None = None,
    store: Store | str | Path | None = None,
) -> int:
    """``perflab import``: a dataset CSV made elsewhere (other tools' header names too) as
    a new campaign ``name``; returns how many runs were imported."""
    from perflab.campaign.dataset import import_csv

    return import_csv(open_store(store), csv_file, name, metric)


def compare(
    a: RunSpec,
    b: RunSpec,
    metric: str = "us_per_task",
    threshold: float = 0.05,
    alpha: float = 0.01,
    runs: int | None = None,
    min_runs: int | None = None,
    sequential: bool = True,
    paired: bool = True,
    on_run: Callable[[str, int, int, Side], None] | None = None,
    max_time_s: float | None = None,
) -> Comparison:
    """``perflab compare``: run A and B interleaved (ABBA) until the gate decides (at most
    ``runs`` per side: by default what ``perflab calibrate`` stored for A, else the gate's
    default; with ``max_time_s``, undecided, on past them until out of time) and return the
    comparison (``.decision.verdict``, ``.regression``, ``.too_noisy``, ``.to_dict()``).
    Side options (``--package-b``, ``--python-a`` …) are ``compare.sides.side_spec``'s."""
    from perflab.compare import calibrate as cal
    from perflab.compare.gate import DEFAULT_MIN_RUNS, Side, run_compare
    from perflab.files import perflab_home
    from perflab.run.measure import validate

    sides = [Side("A", a), Side("B", b)]
    for side in sides:
        validate(side.spec)
    for side in sides:  # private venvs and trees are built (or found) before the first run
        side.ready()  # once: every run of the side reuses it
    source = "--runs"
    if runs is None:
        runs, source = cal.runs_per_side(sides[0].spec, metric, perflab_home())
    return run_compare(
        sides[0], sides[1], metric, threshold, alpha,
        DEFAULT_MIN_RUNS if min_runs is None else min_runs, runs, source,
        sequential=sequential, progress=on_run, paired=paired, max_time_s=max_time_s,
    )  # fmt: skip


def tune(
    name: str,
    spec: RunSpec,
    candidates: list[str],
    budget: int = 100,
    catalogs: list[str] | None = None,
    seed: int = 0,
    pairs: int = 8,
    search: str | None = None,
    runner: str = "local",
    runner_config: str | None = None,
    on_stage: Callable[[str, str, int, float | None], None] | None = None,
    store: Store | str | Path | None = None,
    precision: Any = None,
) -> dict[str, Any]:
    """``perflab tune``: the best set of ``candidates`` for ``spec`` in ``budget`` runs (``search``
    of ``tune.searches.SEARCHES``), reduced, its speed-up measured (``precision``: by
    ``tune.precise.plan_final``); each stage a resumable campaign. ``tune.render`` prints it."""
    from perflab.tune.driver import tune as run_tune
    from perflab.tune.searches import DEFAULT_SEARCH

    config = str(Path(runner_config).resolve()) if runner_config else None
    if runner == "parsl" and config:  # its batch system, before a stage is stored
        from perflab.campaign.runners.parsl import check_config

        check_config(config)
    return run_tune(
        open_store(store), name, spec, candidates, budget, catalogs, seed, pairs, runner,
        on_stage, search or DEFAULT_SEARCH, precision, parsl_config=config,
    )  # fmt: skip


def explain(
    package: str,
    a: str,
    b: str,
    spec: RunSpec,
    runs: int = 6,
    metrics: list[str] | None = None,
    name: str | None = None,
    screen_runs: int = 0,
    alpha: float = 0.05,
    threshold: float = 0.05,
    screen_alpha: float = 0.1,
    modules: tuple[str, ...] = (),
    classes: tuple[str, ...] = (),
    safety: str = "opt-in",
    seed: int = 0,
    store: Store | str | Path | None = None,
    output: str | Path | None = None,
    on_stage: Callable[[str, int], None] | None = None,
    **early: Any,
) -> dict[str, Any]:
    """``perflab explain``: which changes between releases ``a`` and ``b`` of ``package``
    cost how much of the step between them, measured on ``spec``; the options are the verb's
    (``explain.inputs.checked``; ``early``: ``Setup.step_looks``/``step_budget``, the step's
    early stop). Writes explain.json/.md/.html into ``output``; returns the result. Resumable."""
    import json

    from perflab.explain.driver import explain as run_explain
    from perflab.explain.inputs import checked
    from perflab.explain.plan import Setup
    from perflab.explain.render import markdown, page
    from perflab.files import atomic_write

    chosen = checked(Setup(
        name or "", package, a, b, spec, metrics or [], runs, screen_runs, alpha, threshold,
        screen_alpha, modules, classes, safety, seed, **early,
    ))  # fmt: skip
    result = run_explain(lambda: open_store(store), chosen, on_stage)
    if output is not None:
        out = Path(output)
        out.mkdir(parents=True, exist_ok=True)
        atomic_write(out / "explain.json", json.dumps(result, indent=1, default=str))
        atomic_write(out / "explain.md", markdown(result))
        atomic_write(out / "explain.html", page(result))
    return result


def zoo(
    cfg: ZooConfig | None = None,
    name: str | None = None,
    prefix: str = "zoo",
    seed: int | None = None,
    threshold: float = 0.5,
    basis: str = "peak",
    output: str | Path | None = None,
    store: Store | str | Path | None = None,
    run_round: Callable[[Store, str], dict[str, int]] | None = None,
    on_levels: Callable[[list[dict[str, Any]]], None] | None = None,
    **precise: Any,
) -> dict[str, Any]:
    """``perflab zoo`` (and ``metg``: one target, kinds ``["metg"]``): the suite of ``cfg``
    (default: every engine with dependencies) as a resumable campaign; returns its name, counts
    and table, writes zoo.html into ``output``. See ``zoo.driver.run_zoo`` (``precise``)."""
    from perflab.zoo.driver import run_zoo
    from perflab.zoo.suite import ZooConfig

    result = run_zoo(
        open_store(store), cfg or ZooConfig(), name, prefix, seed, threshold, basis,
        run_round, on_levels, **precise,
    )  # fmt: skip
    if output:
        from perflab.report.zoo import write_zoo_report

        write_zoo_report(result["table"], result["rows"], output, result["name"])
    return result


def profile(
    spec: RunSpec,
    kinds: list[str],
    out_dir: str | Path | None = None,
    against: RunSpec | None = None,
    **options: Any,
) -> dict[str, Any]:
    """``perflab profile``: profile ``spec`` (and ``against``, e.g. the same target with a
    fix) with ``kinds`` (timeline, io, syscalls) and write the report into ``out_dir``;
    ``options`` and the result are ``perflab.profile.api.profile``'s."""
    from perflab.profile.api import profile as run_profile

    return run_profile(spec, kinds, out_dir, against, **options)
