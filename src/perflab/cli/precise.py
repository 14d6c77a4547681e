"""``--precision PCT`` and ``--max-time``: the options (names, metavar, parsing) every verb
that takes a CI half-width target shares, the one plan they all make
(``compare.planned.plan_or_refuse``), and the one way a verb that cannot honour the target
refuses it."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import click
from click.core import ParameterSource

from perflab.errors import PerflabError
from perflab.spec import RunSpec

if TYPE_CHECKING:
    from perflab.compare.precision import Plan


def precision_option(what: str) -> Callable[[Any], Any]:
    """The ``--precision PCT`` option (into ``precision_target``), its help ending ``what``."""
    return click.option(
        "--precision", "precision_target", metavar="PCT", help=f"CI half-width to reach {what}."
    )


#: ``--max-time``: the time budget of a ``--precision`` plan.
max_time_option = click.option(
    "--max-time",
    type=float,
    help="Seconds a --precision plan may take (default 3600); a plan longer is refused.",
)


def parse_target(text: str) -> float:
    """'3%', '3 %' or '0.03' → 0.03; anything else is bad input naming ``--precision``."""
    from perflab.compare.planned import parse_target as parse

    return parse(text)


def refuse(verb: str, target: str | None, why: str) -> None:
    """A verb that cannot honour ``--precision`` says why (exit 2) instead of ignoring it."""
    if target is not None:
        raise PerflabError(f"{verb} cannot honour --precision: {why}")


def given(*params: str) -> list[str]:
    """The options among ``params`` (parameter names) the user gave on the command line (or
    in the environment), by their first long name: what a plan would overrule."""
    ctx = click.get_current_context()
    flags = {p.name: next((o for o in p.opts if o.startswith("--")), p.opts[0])
             for p in ctx.command.params}  # fmt: skip
    told = (ParameterSource.COMMANDLINE, ParameterSource.ENVIRONMENT)
    return [flags[p] for p in params if ctx.get_parameter_source(p) in told]


def plan_for(
    spec: RunSpec,
    metric: str,
    target: str,
    max_time: float | None,
    alpha: float,
    units: int = 2,
    scale: float = 1.0,
    replaces: tuple[str, ...] = ("runs", "tasks", "time_s"),
    pilot_on: RunSpec | None = None,
) -> Plan:
    """The plan for ±``target`` (see ``plan_or_refuse`` for ``units`` and ``scale``): bad
    input (exit 2, nothing run) when an option it replaces was given, without stored parts
    (an engine target: a command's A/A pilot runs first, said on stderr), or when it takes
    longer than ``max_time`` (default 3600 s). A command's pilot runs on ``pilot_on`` when
    given (a release's spec: the bare base may not import the package); its parts are
    stored under ``spec``, which plans every later run of the verb."""
    from perflab.compare import planned as pc
    from perflab.compare.gate import Side

    clash = given(*replaces)
    if clash:
        raise PerflabError(f"--precision plans the runs and the window: drop {', '.join(clash)}")
    limit = pc.DEFAULT_MAX_TIME_S if max_time is None else max_time
    from perflab.cli.app import err_console

    side = Side("A", spec)
    # every verb here makes all its planned runs: its interval is at its alpha, not at a
    # sequential look's share of it; a command without stored parts says its pilot runs
    pilot = Side("A", pilot_on) if pilot_on is not None else None
    got = pc.plan_or_refuse(side, metric, parse_target(target), limit, alpha, units, scale,
                            alpha, say=err_console.print, pilot_on=pilot)  # fmt: skip
    return got[1]


def sized(spec: RunSpec, pl: Plan) -> RunSpec:
    """``spec`` with the plan's window (tasks per run; no time window); a command as it is
    (its run is its whole window)."""
    if spec.command is not None:
        return spec
    return dataclasses.replace(spec, tasks=pl.tasks, time_s=None)
