"""``perflab plugins``: every engine, workload, design, runner and search with its options
(one declaration each: what it accepts, its default, its help)."""

from __future__ import annotations

import json
from typing import Any

import click
from rich.console import Console
from rich.table import Table

from perflab.cli.app import json_option, main
from perflab.errors import PerflabError
from perflab.options import help_rows

#: kind -> (registry module, registry name, the attribute holding the options; None: the
#: kind takes none)
KINDS: dict[str, tuple[str, str, str | None]] = {
    "engine": ("perflab.engines", "ENGINES", "options"),
    "workload": ("perflab.workloads", "WORKLOADS", "params"),
    "design": ("perflab.campaign.designs", "DESIGNS", "options"),
    "runner": ("perflab.campaign.runners", "RUNNERS", "options"),
    "search": ("perflab.tune.searches", "SEARCHES", None),
}


def plugin_options(kind: str | None = None, name: str | None = None) -> dict[str, Any]:
    """kind -> plugin name -> its option rows (see ``options.help_rows``)."""
    import importlib

    if kind is not None and kind not in KINDS:
        raise PerflabError(f"unknown plugin kind {kind!r} (kinds: {', '.join(KINDS)})")
    out: dict[str, Any] = {}
    for k, (module, registry, attr) in KINDS.items():
        if kind not in (None, k):
            continue
        reg = getattr(importlib.import_module(module), registry)
        names = [name] if name is not None else reg.names()
        out[k] = {n: help_rows(getattr(reg.get(n), attr)) if attr else [] for n in names}
    return out


@main.command("plugins")
@click.argument("kind", required=False)
@click.argument("name", required=False)
@json_option
def plugins(kind: str | None, name: str | None, as_json: bool) -> None:
    """Plugins and their options: KIND is engine, workload (its --param), design (its
    --design-opt), runner or search (tune's --search); NAME one of them."""
    found = plugin_options(kind, name)
    if as_json:
        click.echo(json.dumps(found, default=str))
        return
    console = Console()
    for k, by_name in found.items():
        for n, rows in by_name.items():
            table = Table(title=f"{k} {n}", title_justify="left", expand=False)
            for col in ("option", "accepts", "default", "help"):
                table.add_column(col, overflow="fold")
            for r in rows:
                table.add_row(r["name"], r["accepts"], _default(r["default"]), r["help"])
            console.print(table if rows else f"{k} {n}: no options")


def _default(value: Any) -> str:
    return "(the plugin's)" if value is None else repr(value)
