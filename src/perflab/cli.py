"""The ``perflab`` command: a thin shell over the Python API.

Exit codes: 0 all runs ok; 1 a run failed or timed out (it is still reported); 2 bad input.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import click
from rich.console import Console
from rich.table import Table

from perflab.errors import PerflabError
from perflab.factors.catalog import CATEGORIES, load_catalogs, treat
from perflab.measure import COMMAND_TARGET, measure, summarize, validate
from perflab.record import RunRecord
from perflab.spec import RunSpec

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
        title += f"  [{', '.join(first.treatments)}]"
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


@main.command()
@click.option(
    "--target",
    "-t",
    default="parsl-htex",
    show_default=True,
    help="Engine: parsl-htex, parsl-threads, cf-threads, cf-processes, dask.",
)
@click.option(
    "--workload", "-w", default="noop", show_default=True, help="Workload: noop, sleep, cpu, hang."
)
@click.option("--tasks", "-n", type=int, help="Run exactly N counted tasks (after the warm-up).")
@click.option(
    "--time",
    "time_s",
    type=float,
    help="Size the counted batch to take about SECONDS (parsl-perf's estimate mode); "
    "only the final batch counts. Default: 5 unless --tasks is given.",
)
@click.option(
    "--warmup",
    type=int,
    default=20,
    show_default=True,
    help="Uncounted warm-up tasks after the engine starts.",
)
@click.option(
    "--arg-bytes", type=int, help="noop: bytes of payload per task (parsl-perf --argsize)."
)
@click.option("--task-ms", type=float, help="sleep: milliseconds per task.")
@click.option("--task-us", type=float, help="cpu: microseconds of busy loop per task.")
@click.option(
    "--param",
    "params",
    multiple=True,
    metavar="KEY=VALUE",
    help="Any workload parameter (repeatable).",
)
@click.option("--workers", type=int, help="Workers (per node for HTEX). Default: cores.")
@click.option(
    "--opt",
    "opts",
    multiple=True,
    metavar="KEY=VALUE",
    help="Engine option, e.g. prefetch_capacity=100 (repeatable).",
)
@click.option(
    "--parsl-config",
    type=click.Path(),
    help="parsl-perf style config file (defines `config` or `fresh_config()`).",
)
@click.option(
    "--command",
    "-c",
    help="Black-box target: a shell command whose last stdout "
    "line is the score (a number, or JSON with the --metric key).",
)
@click.option(
    "--metric",
    default="us_per_task",
    show_default=True,
    help="Which metric a black-box command's score is.",
)
@click.option(
    "--timeout",
    "timeout_s",
    type=float,
    default=300.0,
    show_default=True,
    help="Seconds before the whole run's process tree is killed.",
)
@click.option(
    "--repeat",
    "-r",
    type=int,
    default=1,
    show_default=True,
    help="Fresh measurements of the same thing; prints median and CV.",
)
@click.option(
    "--run-root", type=click.Path(), help="Where run directories go (default .perflab/runs)."
)
@click.option("--keep-run-dir", is_flag=True, help="Keep the run directory of ok runs too.")
@click.option(
    "--treat",
    "treat_set",
    default="",
    metavar="A,B=LEVEL",
    help="Treatment set: factor names from the catalog, NAME=LEVEL for levelled "
    "factors. Command targets also pass unknown names through PERFLAB_TREATMENTS.",
)
@click.option(
    "--catalog",
    "catalogs",
    multiple=True,
    type=click.Path(),
    help="Extra factor catalog (TOML), on top of the built-in one (repeatable).",
)
@click.option("--json", "as_json", is_flag=True, help="Print exactly one JSON object on stdout.")
def run(
    target: str,
    workload: str,
    tasks: int | None,
    time_s: float | None,
    warmup: int,
    arg_bytes: int | None,
    task_ms: float | None,
    task_us: float | None,
    params: tuple[str, ...],
    workers: int | None,
    opts: tuple[str, ...],
    parsl_config: str | None,
    command: str | None,
    metric: str,
    timeout_s: float,
    repeat: int,
    run_root: str | None,
    keep_run_dir: bool,
    treat_set: str,
    catalogs: tuple[str, ...],
    as_json: bool,
) -> None:
    """Measure one black-box run (or --repeat K runs) in fresh processes."""
    wl_params = _kv(params, "--param")
    for key, value in (("arg_bytes", arg_bytes), ("task_ms", task_ms), ("task_us", task_us)):
        if value is not None:
            wl_params[key] = value
    engine_options = _kv(opts, "--opt")
    if workers is not None:
        engine_options["workers"] = workers
    if tasks is None and time_s is None:
        time_s = 5.0
    spec = RunSpec(
        target=target,
        workload=workload,
        tasks=tasks,
        time_s=time_s,
        warmup=warmup,
        params=wl_params,
        engine_options=engine_options,
        parsl_config=parsl_config,
        command=command,
        metric=metric,
        timeout_s=timeout_s,
        run_root=run_root,
        keep_run_dir=keep_run_dir,
    )
    if repeat < 1:
        raise PerflabError(f"--repeat must be at least 1 (got {repeat})")
    if treat_set or catalogs:
        spec = treat(spec, treat_set, load_catalogs(list(catalogs)))
    validate(spec if command is None else replace(spec, target=COMMAND_TARGET))
    records: list[RunRecord] = []
    for i in range(repeat):
        if not as_json:
            err_console.print(f"[dim]run {i + 1}/{repeat} …[/dim]")
        records.append(measure(spec))
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
