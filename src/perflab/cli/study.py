"""``perflab study``: studies with their own tables and charts, one subgroup each.

``study job-submission table|curve`` (shell and radical.saga job submission, job-service and
endpoint scaling, pub/sub event rates) and ``study postprocess run|report`` (retrieve-one vs
drain-many). ``perflab seed001`` and ``perflab postprocess`` are the old spellings, hidden and
kept for one release."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from perflab.cli.app import (
    Aliased,
    err_console,
    json_option,
    main,
    output_option,
    progress,
    runs_option,
)
from perflab.errors import PerflabError, Unanswerable
from perflab.studies import job_submission as submission
from perflab.studies import job_submission_charts as render


def _levels(text: str, what: str) -> list[int]:
    try:
        values = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise PerflabError(f"{what} {text!r} is not a comma-separated list of integers") from None
    if not values or min(values) < 1:
        raise PerflabError(f"{what} {text!r}: give integers >= 1")
    return values


@main.group("study")
def study() -> None:
    """Studies with their own tables and charts: job submission, post-processing."""


@study.group("job-submission")
def job_submission() -> None:
    """Shell and radical.saga job submission, job-service scaling, pub/sub event rates."""


@job_submission.command("table")
@click.option("--shell-jobs", type=int, default=500, show_default=True, help="Jobs per shell row.")
@click.option("--saga-jobs", type=int, default=40, show_default=True, help="Jobs per saga row.")
@runs_option(1, "Runs per row.", old=("--repeat", "-r"))
@click.option("--no-patched", is_flag=True, help="Leave out the flush-patched saga row.")
@click.option("--timeout", type=float, default=300.0, show_default=True, help="Per run (s).")
@json_option
def table_cmd(
    shell_jobs: int, saga_jobs: int, runs: int, no_patched: bool, timeout: float, as_json: bool
) -> None:
    """The job-submission table: shell raw, shell wrapper, saga fork create_job, run_job,
    ssh, bulk."""
    if shell_jobs < 1 or saga_jobs < 1:
        raise PerflabError("--shell-jobs and --saga-jobs must be at least 1")
    rows = submission.table_rows(shell_jobs, saga_jobs, timeout, patched=not no_patched)
    submission.run_rows(rows, runs, progress)
    out = submission.table(rows)
    if as_json:
        records = {r.id: [x.to_dict() for x in r.records] for r in rows}
        click.echo(json.dumps({"table": out, "records": records}))
    else:
        render.print_table(out)
    if any(r["failed"] for r in out):
        sys.exit(1)


@job_submission.command("curve")
@click.argument("kind", type=click.Choice(["services", "endpoints", "clients"]))
@click.option("--levels", default=None, help="Comma-separated levels (default per curve).")
@click.option("--jobs", type=int, default=None, help="Jobs (or events) per run.")
@click.option("--shards", default="1,4", show_default=True, help="clients curve: shard counts.")
@click.option("--endpoint", type=click.Choice(["fork", "ssh"]), default="fork", show_default=True)
@runs_option(1, "Runs per point.", old=("--repeat", "-r"))
@click.option("--patch/--no-patch", default=False, help="saga curves: the flush patch on.")
@click.option("--timeout", type=float, default=300.0, show_default=True, help="Per run (s).")
@output_option("Write the figure in this folder.", old=("--out",))
@json_option
def curve_cmd(
    kind: str,
    levels: str | None,
    jobs: int | None,
    shards: str,
    endpoint: str,
    runs: int,
    patch: bool,
    timeout: float,
    output: str | None,
    as_json: bool,
) -> None:
    """Scaling curves: saga job services 1..8, sshd endpoints 1..5, redis clients 1..6."""
    default = {"services": "1,2,3,4,5,6,7,8", "endpoints": "1,2,3,4,5", "clients": "1,2,3,4,5,6"}
    lv = _levels(levels or default[kind], "--levels")
    n = jobs or (5000 if kind == "clients" else 40)
    if n < 1:
        raise PerflabError("--jobs must be at least 1")
    points = []
    if kind == "clients":
        for k in _levels(shards, "--shards"):
            points += submission.curve_specs(kind, lv, n, timeout, shards=k)
    else:
        fixed = {} if kind == "endpoints" else {"endpoint": endpoint}
        points = submission.curve_specs(kind, lv, n, timeout, **fixed)
        if patch:
            points = [(lvl, submission.with_flush_patch(spec)) for lvl, spec in points]
    rows = submission.run_curve(points, runs, progress)
    figures = render.curve_figure(kind, rows, kind, Path(output)) if output else []
    if as_json:
        click.echo(json.dumps({"curve": kind, "rows": rows, "figures": [str(p) for p in figures]}))
    else:
        render.print_curve(kind, rows)
        for p in figures:
            err_console.print(f"wrote {p}")
    if any(r["failed"] for r in rows):
        sys.exit(1)


@study.group("postprocess")
def postprocess() -> None:
    """Retrieve-one vs drain-many: sweep the four parameters, chart, check the model."""


def _folder(output: str | None, out: str | None) -> Path:
    if not (output or out):
        raise PerflabError("give the study's folder: -o/--output DIR")
    return Path(output or out or "")


@postprocess.command("run")
@click.argument("out", required=False, type=click.Path(file_okay=False), metavar="")
@output_option("The study's folder (points.jsonl, charts).")
@click.option(
    "--targets",
    default="cf-processes,workqueue",
    show_default=True,
    help="Comma-separated engines.",
    cls=Aliased,
    old=("--engines",),
)
@runs_option(3, "Runs per point.", old=("--reps",))
@click.option(
    "--scale",
    type=float,
    default=0.2,
    show_default=True,
    help="Multiplies the original study's 1 s task and post-process times.",
)
@click.option("--seed-scale", is_flag=True, help="The original study's times (1 s base; long).")
@click.option("--tasks", type=int, default=100, show_default=True, help="Base max tasks.")
@click.option("--base-only", is_flag=True, help="Only the base point (both policies).")
def run_cmd(
    out: str | None,
    output: str | None,
    targets: str,
    runs: int,
    scale: float,
    seed_scale: bool,
    tasks: int,
    base_only: bool,
) -> None:
    """Measure every sweep point not yet in OUTPUT/points.jsonl (resumable), then chart."""
    from perflab.engines import ENGINES
    from perflab.studies.postprocess import design, run_study

    folder = _folder(output, out)
    names = [e for e in targets.split(",") if e]
    for name in names:
        ENGINES.get(name)
    points = design(names, 1.0 if seed_scale else scale, runs, tasks, base_only)
    run_study(points, folder, progress=lambda s: click.echo(s, err=True))
    _answered(_report(folder))


@postprocess.command("report")
@click.argument("out", required=False, type=click.Path(file_okay=False), metavar="")
@output_option("The study's folder.")
@json_option
def report_cmd(out: str | None, output: str | None, as_json: bool) -> None:
    """Charts (OUTPUT/postprocess_<engine>.png|svg) and OUTPUT/summary.json from
    OUTPUT/points.jsonl."""
    summary = _report(_folder(output, out))
    click.echo(json.dumps(summary) if as_json else _text(summary))
    _answered(summary)


def _answered(summary: dict) -> None:
    """Exit 1 with the cause when points of the study have no value (shown and stored)."""
    from perflab.studies.postprocess import unanswered

    why = unanswered(summary)
    if why:
        raise Unanswerable(f"post-processing study: {why}")


def _report(out: Path) -> dict:
    from perflab.studies.postprocess import report

    if not (out / "points.jsonl").exists():
        raise PerflabError(
            f"{out}/points.jsonl: no study there (run `perflab study postprocess run -o DIR`)"
        )
    return report(out)


def _text(summary: dict) -> str:
    lines = []
    for g in summary["base_gain"]:
        lo, hi = g["gain_ci"]
        ci = f"95% CI {100 * lo:.1f}..{100 * hi:.1f}%" if lo is not None else "one run each"
        lines.append(
            f"{g['engine']}: base makespan retrieve-one {g['retrieve_one_s']:.2f} s, "
            f"drain-many {g['drain_many_s']:.2f} s, gain {100 * g['gain']:.1f}% "
            f"({ci}; model {100 * g['model_gain']:.1f}%; the original study's Coffea run: 20%)"
        )
    for engine, charts in summary["gains"].items():
        for chart, series in charts.items():
            cells = [
                f"{g['level']:g}: {100 * g['gain']:+.0f}%"
                + (
                    f" [{100 * g['gain_ci'][0]:+.0f},{100 * g['gain_ci'][1]:+.0f}]"
                    if g["gain_ci"][0] is not None
                    else ""
                )
                for g in series
            ]
            lines.append(f"{engine} gain by {chart}: " + "; ".join(cells))
    for engine, e in summary["model_error"].items():
        lines.append(
            f"{engine}: model error median {100 * e['median']:+.1f}%, 5..95% "
            f"{100 * e['p5']:+.1f}..{100 * e['p95']:+.1f}%, within 10%: "
            f"{100 * e['within_10pct']:.0f}% of {e['runs']} runs, "
            f"{100 * e['by_point']['within_10pct']:.0f}% of {e['by_point']['runs']} points "
            f"(worst point {100 * e['by_point']['worst']:+.1f}%)"
        )
    for a in summary.get("absent") or []:  # no value, and why
        what = ", ".join(f"{k} {a[k]}" for k in ("tasks", "concurrency", "task_s", "pp_s"))
        lines.append(f"{a['engine']} {a['policy']} ({what}): no value: failed in {a['runs']} "
                     f"of {a['runs']} runs: {a['cause']}")  # fmt: skip
    lines += [f"chart: {p}" for p in summary["charts"]]
    return "\n".join(lines)


def _old_spelling() -> None:
    """An old name of a study group (hidden, kept for one release)."""


# The old spellings: the same commands, hidden from --help.
for _old, _group in (("seed001", job_submission), ("postprocess", postprocess)):
    main.add_command(
        click.Group(_old, commands=_group.commands, callback=_old_spelling, hidden=True)
    )
