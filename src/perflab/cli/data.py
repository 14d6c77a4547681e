"""``perflab export`` and ``perflab import``: datasets in and out of the store."""

from __future__ import annotations

from pathlib import Path

import click

from perflab.cli.app import main, store_option
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
@click.option("--metric", default="us_per_task", show_default=True, help="With --deltas.")
@click.option(
    "-o",
    "--output",
    type=click.Path(),
    help="Output file (default NAME.csv/.parquet; NAME.deltas.csv with --deltas).",
)
@store_option
def export_cmd(
    name: str, fmt: str, deltas: bool, metric: str, output: str | None, store_path: str | None
) -> None:
    """Write campaign NAME's runs as a dataset (CSV: semicolon-separated, 0/1 factor columns),
    or its deltas (docs/contracts.md)."""
    # imported here: pandas would otherwise be paid for by every verb's start-up
    from perflab.campaign.dataset import export
    from perflab.campaign.store import Store

    if deltas:
        click.echo(
            str(_export_deltas(name, metric, output or f"{name}.deltas.csv", fmt, store_path))
        )
        return
    click.echo(str(export(Store(store_path), name, output or f"{name}.{fmt}", fmt)))


def _export_deltas(name: str, metric: str, output: str, fmt: str, store_path: str | None) -> Path:
    """The deltas CSV of campaign ``name``, written whole or not at all."""
    from perflab.analysis.deltas import run_pairs
    from perflab.campaign.source import load
    from perflab.cli.app import shown_warnings
    from perflab.files import atomic_write

    if fmt != "csv":
        raise PerflabError("--deltas: the deltas are written as CSV only (drop --format)")
    with shown_warnings():
        df = run_pairs(load(name, store_path, metric))
    path = Path(output)
    try:
        return atomic_write(path, lambda tmp: df.to_csv(tmp, sep=";", index=False))
    except OSError as exc:
        raise PerflabError(f"{path}: cannot write ({exc.strerror or exc})") from None


@main.command("import")
@click.argument("csv_file", type=click.Path())
@click.option("--campaign", "name", required=True, help="Name of the new campaign.")
@click.option("--metric", default="us_per_task", show_default=True, help="The score column.")
@store_option
def import_cmd(csv_file: str, name: str, metric: str, store_path: str | None) -> None:
    """Import a dataset CSV made elsewhere (other tools' header names too) as a new campaign."""
    from perflab.campaign.dataset import import_csv
    from perflab.campaign.store import Store

    n = import_csv(Store(store_path), csv_file, name, metric)
    click.echo(f"imported {n} runs into campaign {name}")
