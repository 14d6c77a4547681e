"""``perflab export`` and ``perflab import``: datasets in and out of the store."""

from __future__ import annotations

import click

from perflab.cli.app import main, shown_warnings, store_option
from perflab.cli.spelling import Deprecated
from perflab.errors import PerflabError


@main.command("export")
@click.argument("name")
@click.option(
    "--format", "fmt", type=click.Choice(["csv", "parquet"]), default="csv", show_default=True
)
@click.option(
    "--deltas",
    is_flag=True,
    help="Write the deltas instead: one row per pair of runs X, X+{t} "
    "(factor;before;after;delta; one True/False column per factor: in X). CSV only.",
)
@click.option("--metric", default=None, help="With --deltas (default: the campaign's own).")
@click.option(
    "-o",
    "--output",
    type=click.Path(),
    help="Output file (default NAME.csv/.parquet; NAME.deltas.csv with --deltas).",
)
@store_option
def export_cmd(
    name: str,
    fmt: str,
    deltas: bool,
    metric: str | None,
    output: str | None,
    store_path: str | None,
) -> None:
    """Write campaign NAME's runs as a dataset (CSV: semicolon-separated, 0/1 factor columns),
    or its deltas (docs/contracts.md)."""
    from perflab.api import export

    if not deltas:
        click.echo(str(export(name, output, fmt, store=store_path)))
        return
    with shown_warnings():  # the analysis' pairing may warn
        click.echo(str(export(name, output, fmt, True, metric, store_path)))


@main.command("import")
@click.argument("csv_file", type=click.Path())
@click.argument("name", required=False)
@click.option("--campaign", "old_name", cls=Deprecated, now="a positional NAME")
@click.option(
    "--metric",
    default=None,
    help="The score column (default: us_per_task, or wall_s where no row has one).",
)
@store_option
def import_cmd(
    csv_file: str,
    name: str | None,
    old_name: str | None,
    metric: str | None,
    store_path: str | None,
) -> None:
    """Import a dataset CSV made elsewhere (other tools' header names too) as a new campaign
    NAME."""
    name = name or old_name
    if not name:
        raise PerflabError("perflab import CSV NAME: give the new campaign's NAME")
    from perflab.api import import_dataset

    n = import_dataset(csv_file, name, metric, store_path)
    click.echo(f"imported {n} runs into campaign {name}")
