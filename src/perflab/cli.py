"""The ``perflab`` command: a thin shell over the Python API.

Exit codes: 0 all runs ok; 1 a run failed or timed out (it is still reported); 2 bad input.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from perflab.errors import PerflabError
from perflab.factors.catalog import CATEGORIES, load_catalogs, treat
from perflab.measure import COMMAND_TARGET, measure_repeated, summarize, validate
from perflab.record import RunRecord
from perflab.spec import RunSpec
from perflab.store import Store

err_console = Console(stderr=True)


class PerflabGroup(click.Group):
    """Turns PerflabError into one clear line on stderr and exit code 2."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except PerflabError as exc:
            click.echo(f"perflab: error: {exc}", err=True)
            sys.exit(2)


@click.group(cls=PerflabGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="perflab")
def main() -> None:
    """perflab: measure, treat, campaign, analyse and report task-system performance."""


def _kv(values: tuple[str, ...], what: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for item in values:
        key, sep, raw = item.partition("=")
        if not sep or not key:
            raise PerflabError(f"{what} {item!r} is not KEY=VALUE")
        out[key.strip().replace("-", "_")] = _scalar(raw.strip())
    return out


def _scalar(raw: str) -> Any:
    low = raw.lower()
    if low in ("true", "false"):
        return low == "true"
    if low in ("none", "null"):
        return None
    for conv in (int, float):
        try:
            return conv(raw)
        except ValueError:
            pass
    return raw


def _fmt(value: Any, unit: str = "", scale: float = 1.0, digits: int = 1) -> str:
    if value is None:
        return "-"
    return f"{value * scale:,.{digits}f}{unit}"


ROWS: list[tuple[str, str, Callable[[RunRecord], str]]] = [
    ("µs/task", "us_per_task", lambda r: _fmt(r.us_per_task)),
    ("tasks/s", "tasks_per_s", lambda r: _fmt(r.tasks_per_s)),
    ("tasks", "tasks", lambda r: _fmt(r.tasks, digits=0)),
    ("wall", "wall_s", lambda r: _fmt(r.wall_s, " s", digits=3)),
    ("submit", "submit_s", lambda r: _fmt(r.submit_s, " s", digits=3)),
    ("first result", "first_result_s", lambda r: _fmt(r.first_result_s, " s", digits=4)),
    ("cpu user", "cpu_user_s", lambda r: _fmt(r.cpu_user_s, " s", digits=2)),
    ("cpu sys", "cpu_sys_s", lambda r: _fmt(r.cpu_sys_s, " s", digits=2)),
    ("utilisation", "utilization", lambda r: _fmt(r.utilization, " %", 100.0)),
    ("peak RSS", "peak_rss_bytes", lambda r: _fmt(r.peak_rss_bytes, " MiB", 1 / 2**20)),
    ("ctx switches", "ctx_switches", lambda r: _fmt(r.ctx_switches, digits=0)),
    ("written", "write_bytes", lambda r: _fmt(r.write_bytes, " KiB", 1 / 1024)),
    ("log files", "log_bytes", lambda r: _fmt(r.log_bytes, " KiB", 1 / 1024)),
]


def print_records(records: list[RunRecord], summary: dict[str, Any] | None) -> None:
    console = Console()
    first = records[0]
    title = f"{first.target}" + (f" / {first.workload}" if first.workload else "")
    if first.treatments:
        title += "  " + escape(f"[{', '.join(first.treatments)}]")
    table = Table(title=title, title_justify="left")
    table.add_column("metric")
    for i, r in enumerate(records, 1):
        table.add_column(f"run {i}" if len(records) > 1 else r.status, justify="right")
    table.add_row("status", *[r.status for r in records])
    for label, _, fmt in ROWS:
        table.add_row(label, *[fmt(r) for r in records])
    console.print(table)
    if summary and summary.get("n_ok", 0) >= 2:
        console.print(
            f"median {summary['median']:,.1f} µs/task over {summary['n_ok']} runs, "
            f"CV {summary['cv'] * 100:.1f} %"
        )
    for r in records:
        if r.status != "ok":
            err_console.print(f"[red]run {r.run_id} {r.status}[/red]: {r.error}")
            if r.measurement.get("run_dir"):
                err_console.print(f"  run directory kept: {r.measurement['run_dir']}")
        for p in r.measurement.get("outlived", []):
            err_console.print(
                f"[yellow]warning[/yellow]: pid {p['pid']} ({p['name']}) outlived run "
                f"{r.run_id} and was killed: {p['cmdline'][:100]}"
            )


RUN_OPTIONS = [
    click.option(
        "--target",
        "-t",
        default="parsl-htex",
        show_default=True,
        help="Engine: parsl-htex, parsl-threads, cf-threads, cf-processes, dask.",
    ),
    click.option(
        "--workload",
        "-w",
        default="noop",
        show_default=True,
        help="Workload: noop, sleep, cpu, probe, hang.",
    ),
    click.option(
        "--tasks", "-n", type=int, help="Run exactly N counted tasks (after the warm-up)."
    ),
    click.option(
        "--time",
        "time_s",
        type=float,
        help="Size the counted batch to take about SECONDS (parsl-perf's estimate "
        "mode); only the final batch counts. Default: 5 unless --tasks is given.",
    ),
    click.option(
        "--warmup",
        type=int,
        default=20,
        show_default=True,
        help="Uncounted warm-up tasks after the engine starts.",
    ),
    click.option(
        "--arg-bytes", type=int, help="noop: bytes of payload per task (parsl-perf --argsize)."
    ),
    click.option("--task-ms", type=float, help="sleep: milliseconds per task."),
    click.option("--task-us", type=float, help="cpu: microseconds of busy loop per task."),
    click.option(
        "--param",
        "params",
        multiple=True,
        metavar="KEY=VALUE",
        help="Any workload parameter (repeatable).",
    ),
    click.option("--workers", type=int, help="Workers (per node for HTEX). Default: cores."),
    click.option(
        "--opt",
        "opts",
        multiple=True,
        metavar="KEY=VALUE",
        help="Engine option, e.g. prefetch_capacity=100 (repeatable).",
    ),
    click.option(
        "--parsl-config",
        type=click.Path(),
        help="parsl-perf style config file (defines `config` or `fresh_config()`).",
    ),
    click.option(
        "--command",
        "-c",
        help="Black-box target: a shell command whose last stdout line is the score "
        "(a number, or JSON with the --metric key).",
    ),
    click.option(
        "--metric",
        default="us_per_task",
        show_default=True,
        help="Which metric a black-box command's score is.",
    ),
    click.option(
        "--timeout",
        "timeout_s",
        type=float,
        default=300.0,
        show_default=True,
        help="Seconds before the whole run's process tree is killed.",
    ),
    click.option(
        "--run-root", type=click.Path(), help="Where run directories go (default .perflab/runs)."
    ),
    click.option("--keep-run-dir", is_flag=True, help="Keep the run directory of ok runs too."),
    click.option(
        "--catalog",
        "catalogs",
        multiple=True,
        type=click.Path(),
        help="Extra factor catalog (TOML), on top of the built-in one (repeatable).",
    ),
]


def run_options(f: Callable[..., Any]) -> Callable[..., Any]:
    """The options that say what one run measures (shared by `run` and `campaign create`)."""
    for opt in reversed(RUN_OPTIONS):
        f = opt(f)
    return f


def base_spec(o: dict[str, Any]) -> RunSpec:
    """A RunSpec from the RUN_OPTIONS values (``o`` is click's keyword arguments)."""
    params = _kv(o["params"], "--param")
    for key in ("arg_bytes", "task_ms", "task_us"):
        if o[key] is not None:
            params[key] = o[key]
    engine_options = _kv(o["opts"], "--opt")
    if o["workers"] is not None:
        engine_options["workers"] = o["workers"]
    time_s = o["time_s"] if o["tasks"] is not None or o["time_s"] is not None else 5.0
    return RunSpec(
        target=o["target"],
        workload=o["workload"],
        tasks=o["tasks"],
        time_s=time_s,
        warmup=o["warmup"],
        params=params,
        engine_options=engine_options,
        parsl_config=str(Path(o["parsl_config"]).resolve()) if o["parsl_config"] else None,
        command=o["command"],
        cwd=os.getcwd() if o["command"] else None,
        metric=o["metric"],
        timeout_s=o["timeout_s"],
        run_root=o["run_root"],
        keep_run_dir=o["keep_run_dir"],
    )


@main.command()
@run_options
@click.option(
    "--treat",
    "treat_set",
    default="",
    metavar="A,B=LEVEL",
    help="Treatment set: factor names from the catalog, NAME=LEVEL for levelled "
    "factors. Command targets also pass unknown names through PERFLAB_TREATMENTS.",
)
@click.option(
    "--repeat",
    "-r",
    type=int,
    default=1,
    show_default=True,
    help="Fresh measurements of the same thing; prints median and CV.",
)
@click.option("--json", "as_json", is_flag=True, help="Print exactly one JSON object on stdout.")
def run(treat_set: str, repeat: int, as_json: bool, **o: Any) -> None:
    """Measure one black-box run (or --repeat K runs) in fresh processes."""
    spec = base_spec(o)
    if treat_set or o["catalogs"]:
        spec = treat(spec, treat_set, load_catalogs(list(o["catalogs"])))
    validate(spec if spec.command is None else replace(spec, target=COMMAND_TARGET))

    def progress(i: int, n: int) -> None:
        err_console.print(f"[dim]run {i}/{n} …[/dim]")

    records = measure_repeated(spec, repeat, None if as_json else progress)
    summary = summarize(records) if repeat > 1 else None
    if as_json:
        if repeat == 1:
            click.echo(records[0].to_json())
        else:
            click.echo(json.dumps({"runs": [r.to_dict() for r in records], "summary": summary}))
    else:
        print_records(records, summary)
    bad_score = [r for r in records if r.measurement.get("bad_score")]
    if bad_score:
        click.echo(f"perflab: error: command target: {bad_score[0].error}", err=True)
        sys.exit(2)
    if any(r.status != "ok" for r in records):
        sys.exit(1)


@main.group()
def factors() -> None:
    """Treatment factors: the built-in Parsl catalog plus any --catalog files."""


@factors.command("list")
@click.option("--target", "-t", help="Only factors that apply to this target.")
@click.option("--catalog", "catalogs", multiple=True, type=click.Path(), help="Extra catalog.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
def factors_list(target: str | None, catalogs: tuple[str, ...], as_json: bool) -> None:
    """List factors, in the "nice" category order."""
    cat = load_catalogs(list(catalogs))
    names = sorted(cat.names(target), key=lambda n: (CATEGORIES.index(cat.get(n).category), n))
    if as_json:
        click.echo(json.dumps({n: _factor_dict(cat.get(n)) for n in names}))
        return
    table = Table(title="treatment factors", title_justify="left")
    for col in ("name", "category", "kinds", "levels"):
        table.add_column(col, no_wrap=True)
    table.add_column("description")
    for n in names:
        f = cat.get(n)
        levels = ", ".join(map(str, f.levels)) if f.levels else ""
        table.add_row(n, f.category, ", ".join(f.kinds()), levels, f.description)
    Console().print(table)


@factors.command("show")
@click.argument("name")
@click.option("--catalog", "catalogs", multiple=True, type=click.Path(), help="Extra catalog.")
def factors_show(name: str, catalogs: tuple[str, ...]) -> None:
    """Everything about one factor, as JSON."""
    click.echo(json.dumps(_factor_dict(load_catalogs(list(catalogs)).get(name)), indent=2))


def _factor_dict(f: Any) -> dict[str, Any]:
    return {
        "name": f.name,
        "description": f.description,
        "category": f.category,
        "kinds": f.kinds(),
        "targets": f.targets,
        "levels": f.levels,
        "conflicts": f.conflicts,
        "requires": f.requires,
        "effects": f.effects,
        "source": f.source,
    }


@main.group()
def campaign() -> None:
    """Campaigns: designs of treatment sets, run (and resumed) into the store."""


store_option = click.option(
    "--store", "store_path", type=click.Path(), help="SQLite store (default .perflab/perflab.db)."
)


@campaign.command("create")
@click.argument("name")
@run_options
@click.option(
    "--factors",
    "factor_list",
    required=True,
    metavar="A,B,C=LEVEL",
    help="The campaign's two-level factors (a levelled factor as NAME=LEVEL).",
)
@click.option(
    "--design",
    default="random",
    show_default=True,
    help="full, fractional, random, balanced, sequences, explicit.",
)
@click.option(
    "--design-opt",
    "design_opts",
    multiple=True,
    metavar="KEY=VALUE",
    help="Design option, e.g. runs=32, resolution=5, sequences=8, file=sets.txt.",
)
@click.option(
    "--replicates",
    type=int,
    default=1,
    show_default=True,
    help="Times each set is measured (interleaved, never back to back).",
)
@click.option(
    "--budget",
    help="A cap: a number of runs (refused if the design needs more) "
    "or a duration like 90m (campaign run stops when it is spent).",
)
@click.option("--seed", type=int, help="Random seed for the design and the run order.")
@store_option
@click.option("--json", "as_json", is_flag=True)
def campaign_create(
    name: str,
    factor_list: str,
    design: str,
    design_opts: tuple[str, ...],
    replicates: int,
    budget: str | None,
    seed: int | None,
    store_path: str | None,
    as_json: bool,
    **o: Any,
) -> None:
    """Plan campaign NAME and store its plan (nothing runs yet)."""
    from perflab.campaign import create_campaign

    store = Store(store_path)
    factors_ = [f.strip() for f in factor_list.split(",") if f.strip()]
    c = create_campaign(
        store,
        name,
        base_spec(o),
        factors_,
        design,
        _kv(design_opts, "--design-opt"),
        replicates,
        budget,
        list(o["catalogs"]),
        seed,
    )
    counts = store.counts(name)
    if as_json:
        click.echo(json.dumps({**c, "counts": counts}))
    else:
        Console().print(
            f"campaign [bold]{name}[/bold]: {c['sets']} sets x {replicates} "
            f"replicates = {counts['planned']} runs ({design}); "
            f"run it with: perflab campaign run {name}"
        )


@campaign.command("run")
@click.argument("name")
@click.option("--runner", default="local", show_default=True, help="local, or parsl (scale-out).")
@click.option("--parsl-config", type=click.Path(), help="With --runner parsl: where runs go.")
@click.option("--max-runs", type=int, help="Stop after this many runs (resume later).")
@store_option
@click.option("--json", "as_json", is_flag=True, help="No progress bar; print final counts.")
def campaign_run(
    name: str,
    runner: str,
    parsl_config: str | None,
    max_runs: int | None,
    store_path: str | None,
    as_json: bool,
) -> None:
    """Run (or resume) campaign NAME: each finished run is committed at once."""
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    from perflab.campaign import run_campaign

    store = Store(store_path)
    counts = store.counts(name)
    best: list[float] = []
    if as_json:
        counts = run_campaign(store, name, runner, parsl_config, None, max_runs)
        click.echo(json.dumps(counts))
        return
    columns = [
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TextColumn("ETA"),
        TimeRemainingColumn(),
    ]
    with Progress(*columns, console=err_console) as progress:
        task = progress.add_task(name, total=counts["planned"], completed=counts["done"])

        def on_result(rec: RunRecord, i: int, n: int) -> None:
            if rec.status == "ok" and rec.us_per_task:
                best.append(rec.us_per_task)
            fastest = f"fastest {min(best):,.1f} µs/task" if best else "no ok run yet"
            progress.update(task, advance=1, description=f"{name}  {fastest}")
            if rec.status != "ok":
                progress.console.print(
                    f"[red]{rec.status}[/red] {','.join(rec.treatments) or '-'}: "
                    f"{(rec.error or '').splitlines()[0][:120]}"
                )

        counts = run_campaign(store, name, runner, parsl_config, on_result, max_runs)
    Console().print(
        f"{name}: {counts['done']}/{counts['planned']} done "
        f"({counts['ok']} ok, {counts['failed']} failed, {counts['timeout']} timeout)"
    )


@campaign.command("status")
@click.argument("name")
@store_option
@click.option("--json", "as_json", is_flag=True)
def campaign_status(name: str, store_path: str | None, as_json: bool) -> None:
    """Planned/done/failed, ETA, the latest and the fastest runs of NAME."""
    from perflab.campaign import status

    st = status(Store(store_path), name)
    if as_json:
        click.echo(json.dumps(st))
        return
    c = st["counts"]
    eta = "-" if st["eta_s"] is None else f"{st['eta_s'] / 60:.1f} min"
    console = Console()
    console.print(
        f"[bold]{name}[/bold] ({st['design']}, {st['target']}): {c['done']}/{c['planned']} "
        f"done, {c['ok']} ok, {c['failed']} failed, {c['timeout']} timeout; ETA {eta}"
    )
    if st["best"]:
        console.print(
            f"fastest: {st['best']['us_per_task']:,.1f} µs/task "
            + escape(f"[{st['best']['treatments'] or 'untreated'}]")
        )
    table = Table(title="latest runs", title_justify="left")
    for col in ("seq", "status", "µs/task", "treatments", "started"):
        table.add_column(col)
    for r in st["latest"]:
        table.add_row(
            str(r["seq"]),
            r["status"],
            _fmt(r["us_per_task"]),
            r["treatments"] or "-",
            r["started_at"],
        )
    console.print(table)


@campaign.command("list")
@store_option
@click.option("--json", "as_json", is_flag=True)
def campaign_list(store_path: str | None, as_json: bool) -> None:
    """Every campaign in the store with its counts."""
    store = Store(store_path)
    rows = [
        {"name": n, **store.counts(n), "design": store.campaign(n)["design"]}
        for n in store.campaign_names()
    ]
    if as_json:
        click.echo(json.dumps(rows))
        return
    table = Table(title=f"campaigns in {store.path}", title_justify="left")
    for col in ("name", "design", "planned", "done", "ok", "failed", "timeout"):
        table.add_column(col)
    for r in rows:
        table.add_row(
            *[str(r[c]) for c in ("name", "design", "planned", "done", "ok", "failed", "timeout")]
        )
    Console().print(table)


@main.command("export")
@click.argument("name")
@click.option(
    "--format", "fmt", type=click.Choice(["csv", "parquet"]), default="csv", show_default=True
)
@click.option("-o", "--output", type=click.Path(), help="Output file (default NAME.csv/.parquet).")
@store_option
def export_cmd(name: str, fmt: str, output: str | None, store_path: str | None) -> None:
    """Write campaign NAME's runs as a dataset (CSV: semicolon-separated, 0/1 factor columns)."""
    from perflab.dataset import export

    path = export(Store(store_path), name, output or f"{name}.{fmt}", fmt)
    click.echo(str(path))


@main.command("import")
@click.argument("csv_file", type=click.Path())
@click.option("--campaign", "name", required=True, help="Name of the new campaign.")
@click.option("--metric", default="us_per_task", show_default=True, help="The score column.")
@store_option
def import_cmd(csv_file: str, name: str, metric: str, store_path: str | None) -> None:
    """Import a dataset CSV made elsewhere (the seed's shape too) as a new campaign."""
    from perflab.dataset import import_csv

    n = import_csv(Store(store_path), csv_file, name, metric)
    click.echo(f"imported {n} runs into campaign {name}")


@main.command("analyze")
@click.argument("source")
@click.option(
    "--without",
    default="",
    metavar="A,B",
    help="Analyse only the runs that have none of these factors (conditional effects).",
)
@click.option("--from", "from_set", default=None, metavar="A,B", help="Shapley/paths start set.")
@click.option(
    "--to",
    "to_set",
    default=None,
    metavar="A,B",
    help="Shapley/paths end set (default: the predicted best set).",
)
@click.option("--order", default=None, metavar="A,B,C", help="Also a path in this order.")
@click.option("--metric", default="us_per_task", show_default=True)
@click.option("--seed", type=int, default=0, show_default=True, help="Bootstrap seed.")
@store_option
@click.option("--json", "as_json", is_flag=True, help="Print the analysis as one JSON object.")
def analyze_cmd(
    source: str,
    without: str,
    from_set: str | None,
    to_set: str | None,
    order: str | None,
    metric: str,
    seed: int,
    store_path: str | None,
    as_json: bool,
) -> None:
    """Analyse SOURCE (a campaign name or a dataset CSV): effects, interactions, models,
    best set, paths, Shapley attribution, PCA and noise."""
    import warnings

    from perflab.analysis import analyze, load

    def names(text: str | None) -> list[str] | None:
        return None if text is None else [t for t in text.split(",") if t]

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ds = load(source, store_path, metric)
    for w in caught:
        err_console.print(f"[yellow]warning[/yellow]: {w.message}")
    result = analyze(ds, names(without), names(from_set), names(to_set), names(order), seed)
    if as_json:
        click.echo(json.dumps(result, default=float))
        return
    print_analysis(result)


def _ci(v: dict[str, Any]) -> str:
    if v["ci_low"] is None or v["ci_high"] is None:
        return "n/a (no residual df)"
    return f"{v['ci_low']:,.1f} .. {v['ci_high']:,.1f}"


def print_analysis(a: dict[str, Any]) -> None:
    """The terminal summary of an analysis."""
    console = Console()
    d = a["dataset"]
    speed = a["base_us"] / a["best_us"] if a["best_us"] > 0 else float("nan")
    console.print(
        f"[bold]{d['runs']} ok runs[/bold] ({d['failed']} failed), {d['sets']} treatment sets, "
        f"{len(d['factors'])} factors"
        + (f"; without {', '.join(d['without'])}" if d["without"] else "")
    )
    console.print(
        f"base {a['base_us']:,.1f} µs/task -> best predicted {a['best_us']:,.1f} µs/task "
        f"({speed:.2f}x) with " + escape("[" + (", ".join(a["best_set"]) or "nothing") + "]")
    )
    table = Table(title="per-factor effects (µs/task; negative = faster)", title_justify="left")
    for col in ("factor", "category", "effect", "95% CI", "mean delta", "pairs"):
        table.add_column(col, justify="right" if col not in ("factor", "category") else "left")
    for f, v in sorted(a["factors"].items(), key=lambda kv: kv[1]["effect_us"]):
        md = "-" if v["mean_delta_us"] is None else f"{v['mean_delta_us']:,.1f}"
        table.add_row(
            f,
            v["category"],
            f"{v['effect_us']:,.1f}",
            _ci(v),
            md,
            str(v["n_pairs"]),
        )
    console.print(table)
    inter = Table(
        title="strongest interactions: T(X+a+b) - T(X+a) - T(X+b) + T(X)", title_justify="left"
    )
    for col in ("a", "b", "effect", "95% CI"):
        inter.add_column(col)
    for r in a["interactions"][:5]:
        inter.add_row(r["a"], r["b"], f"{r['effect_us']:,.1f}", _ci(r))
    console.print(inter)
    sh = a["shapley"]
    console.print(
        f"Shapley attribution of {sh['total_us']:,.1f} µs/task "
        f"({sh['measured_sets']}/{sh['sets']} subsets measured, the rest modelled):"
    )
    for f, v in sorted(sh["values"].items(), key=lambda kv: kv[1]):
        console.print(f"  {f:32s} {v:10,.1f}")
    m = a["models"]
    console.print(
        "models (R², 5-fold CV RMSE µs): "
        + ", ".join(f"{k} {v['r2']:.3f}/{v['cv_rmse_us']:,.1f}" for k, v in m.items())
        + f"; best: {a['better_model']}"
    )
    if a["noise"]["noisy_sets"]:
        console.print(
            f"[yellow]noise[/yellow]: {len(a['noise']['noisy_sets'])} sets vary more "
            f"between replicates than the smallest claimed effect "
            f"({a['noise']['smallest_claimed_effect_us']:,.1f} µs)"
        )


@main.command("report")
@click.argument("source")
@click.option(
    "-o",
    "--output",
    type=click.Path(),
    help="Directory for report.html and figures/. "
    "Without it, the summary is printed as terminal tables.",
)
@click.option(
    "--without",
    default=None,
    metavar="A,B",
    help="Factors left out for the 1_means_keep_logs view (default: the logging factors).",
)
@click.option("--metric", default="us_per_task", show_default=True)
@store_option
def report_cmd(
    source: str, output: str | None, without: str | None, metric: str, store_path: str | None
) -> None:
    """Report on SOURCE (a campaign or a dataset CSV): every figure of the seed write-up in
    one offline HTML file, or a terminal summary."""
    from perflab.analysis import analyze, load

    if output is None:
        print_analysis(analyze(load(source, store_path, metric)))
        return
    from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    from perflab.report.html import report_source

    names = None if without is None else [t for t in without.split(",") if t]
    with Progress(
        SpinnerColumn(),
        TextColumn("{task.description}"),
        TimeElapsedColumn(),
        console=err_console,
        transient=True,
    ) as progress:
        progress.add_task(f"analysing {source} and drawing figures")
        path = report_source(source, store_path, output, names, metric)
    click.echo(str(path.resolve()))
