"""The project file on the command line: ``perflab config show`` (the settings in force and
where each came from), ``perflab init`` (a commented ``perflab.toml``), and how every verb
reads the file: its settings become the verb's option defaults (click's ``default_map``),
so a flag given still wins."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from perflab.cli.app import json_option, main
from perflab.project import FILENAME, KEYS, Project, load_project, write_template


def _flag_options(f: Any) -> Any:
    for key in reversed(KEYS):
        f = click.option(
            "--" + key.replace("_", "-"), f"flag_{key}", metavar="VALUE",
            help=f"As if --{key.replace('_', '-')} were given to a verb.",
        )(f)  # fmt: skip
    return f


@main.group("config")
def config_group() -> None:
    """The project file (perflab.toml): what is in force."""


@config_group.command("show")
@_flag_options
@json_option
@click.pass_context
def show(ctx: click.Context, as_json: bool, **flags: Any) -> None:
    """Print the settings in force (the project file's, for --benchmark NAME its table's,
    with any flag given over them) and where each came from: file:line, flag or default."""
    obj = ctx.find_root().obj or {}
    project: Project = obj.get("project") or load_project()
    benchmark = obj.get("benchmark")
    given = {k.removeprefix("flag_"): v for k, v in flags.items() if v is not None}
    force = project.in_force(benchmark, given)
    if as_json:
        click.echo(json.dumps({
            "file": str(project.path) if project.path else None,
            "benchmark": benchmark,
            "benchmarks": project.benchmarks(),
            "settings": {k: {"value": s.value, "source": s.source} for k, s in force.items()},
        }))  # fmt: skip
        return
    where = project.path or f"no {FILENAME} here or in a parent (perflab init writes one)"
    click.echo(f"project file: {where}")
    click.echo(f"benchmark: {benchmark or '[benchmark]'}")
    width = max(map(len, force))
    for key, s in force.items():
        value = "-" if s.value is None else str(s.value)
        click.echo(f"  {key:<{width}}  {value:<24}  {s.source}")


@main.command("init")
@click.argument("path", required=False, type=click.Path(dir_okay=False))
def init(path: str | None) -> None:
    """Write a commented perflab.toml here (or at PATH); an existing file is never
    overwritten (exit 2)."""
    made = write_template(Path(path or FILENAME))
    click.echo(f"wrote {made}: edit it, then `perflab config show`")
