"""``perflab analyze`` and ``perflab report``: explain a campaign or a dataset CSV."""

from __future__ import annotations

import json

import click

from perflab.cli.app import (
    SEED,
    err_console,
    json_option,
    main,
    names,
    shown_warnings,
    store_option,
)
from perflab.errors import PerflabError


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
@click.option(
    "--metric",
    default=None,
    help="Metric analysed (default: the study's own: a command's wall_s unless it named "
    "another, else us_per_task).",
)
@click.option("--seed", type=SEED, default=0, show_default=True, help="Bootstrap seed.")
@click.option(
    "--wide", is_flag=True, help="Every table column, wider than the terminal if need be."
)
@store_option
@json_option
def analyze_cmd(
    source: str,
    without: str,
    from_set: str | None,
    to_set: str | None,
    order: str | None,
    metric: str | None,
    seed: int,
    wide: bool,
    store_path: str | None,
    as_json: bool,
) -> None:
    """Analyse SOURCE (a campaign name or a dataset CSV): effects, interactions, models,
    best set, paths, Shapley attribution, PCA and noise."""
    from perflab.api import analyze
    from perflab.report.terminal import print_analysis

    with shown_warnings():
        result = analyze(
            source, names(without), names(from_set), names(to_set), names(order), metric, seed,
            store_path,
        ).to_json()  # fmt: skip
    if as_json:
        click.echo(json.dumps(result, default=float))
    else:
        print_analysis(result, wide)


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
@click.option(
    "--before-after",
    "before_after",
    multiple=True,
    metavar="FACTOR[:COLOUR_BY]",
    help="Also a before/after scatter of FACTOR's exact X -> X+{FACTOR} pairs, coloured by "
    "whether COLOUR_BY was already applied (repeatable).",
)
@click.option(
    "--metric",
    default=None,
    help="Metric analysed (default: the study's own: a command's wall_s unless it named "
    "another, else us_per_task).",
)
@click.option(
    "--wide", is_flag=True, help="Every table column, wider than the terminal if need be."
)
@store_option
def report_cmd(
    source: str,
    output: str | None,
    without: str | None,
    before_after: tuple[str, ...],
    metric: str | None,
    wide: bool,
    store_path: str | None,
) -> None:
    """Report on SOURCE (a campaign or a dataset CSV): every figure in one
    offline HTML file, or a terminal summary."""
    from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    from perflab.api import analyze, report
    from perflab.report.assemble import parse_before_after
    from perflab.report.terminal import print_analysis

    chosen = parse_before_after(list(before_after))
    if output is None:
        if chosen:
            raise PerflabError("--before-after draws figures: give -o DIR for the report")
        with shown_warnings():
            result = analyze(source, metric=metric, store=store_path).to_json()
        print_analysis(result, wide)
        return
    with (
        shown_warnings(),
        Progress(
            SpinnerColumn(),
            TextColumn("{task.description}"),
            TimeElapsedColumn(),
            console=err_console,
            transient=True,
        ) as progress,
    ):
        progress.add_task(f"analysing {source} and drawing figures")
        path = report(source, store_path, output, names(without), metric, chosen)
    click.echo(str(path.resolve()))
