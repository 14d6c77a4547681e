"""How every verb reads the project file: its settings become the verb's option defaults
(click's ``default_map``), so a flag given still wins."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from perflab.project import load_project

#: Verbs that read the file themselves (``config show`` says where a flag came from).
OWN_READERS = ("config", "init")


def apply_project(ctx: click.Context, config_file: str | None, benchmark: str | None) -> None:
    """Read the project file and make its settings the defaults of the verb about to run."""
    project = load_project(Path(config_file) if config_file else None)
    settings = project.settings(benchmark)  # an unknown benchmark is refused here
    ctx.obj = {"project": project, "benchmark": benchmark}
    name = ctx.invoked_subcommand
    if not settings or name is None or name in OWN_READERS:
        return
    cmd = ctx.command.get_command(ctx, name) if isinstance(ctx.command, click.Group) else None
    if cmd is not None:
        ctx.default_map = {name: verb_defaults(cmd, settings)}


def verb_defaults(cmd: click.Command, settings: dict[str, Any]) -> dict[str, Any]:
    """``settings`` as ``cmd``'s default map: each key to the option spelled ``--key``
    (``engine_config`` -> ``--engine-config``); keys the verb has no option for are left
    out. A group's map holds one for each of its verbs."""
    if isinstance(cmd, click.Group):
        return {n: verb_defaults(c, settings) for n, c in cmd.commands.items()}
    out: dict[str, Any] = {}
    for key, value in settings.items():
        spelling = "--" + key.replace("_", "-")
        for param in cmd.params:
            if isinstance(param, click.Option) and spelling in param.opts and param.name:
                out[param.name] = [value] if param.multiple else value
    return out
