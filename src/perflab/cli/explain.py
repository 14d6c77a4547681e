"""``perflab explain``: which change between two releases (a default, a function) costs how
much of the step between them (``perflab.explain``)."""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING, Any

import click

from perflab.cli.app import (
    SEED,
    Aliased,
    err_console,
    json_option,
    main,
    names,
    output_option,
    progress,
    runs_option,
)
from perflab.cli.compare import ALPHA
from perflab.cli.helpfmt import preset_options
from perflab.cli.precise import max_time_option, plan_for, precision_option, sized
from perflab.cli.ranges import ends_of, range_option
from perflab.cli.spec_options import base_spec, run_options
from perflab.cli.spelling import Deprecated
from perflab.spec import default_metric

if TYPE_CHECKING:
    from perflab.compare.precision import Looks, Plan
    from perflab.spec import RunSpec


@main.command()
@preset_options
@run_options
@click.option("--package", default="parsl", show_default=True, help="Package of the releases.")
@range_option("The older release and the newer one, A..B.")
@click.option("--from", "rel_a", cls=Deprecated, now="--range A..B")
@click.option("--to", "rel_b", cls=Deprecated, now="--range A..B")
@runs_option(6, "Rounds of the step and focus stages (every condition once per round).")
@click.option(
    "--screen-runs",
    type=int,
    default=0,
    help="Replicates of the screen's design (default: the fewest that leave 4 degrees of freedom).",
)
@click.option(
    "--module",
    "modules",
    multiple=True,
    metavar="GLOB",
    help="Modules whose functions are compared (default for parsl: the measured path; else all).",
)
@click.option(
    "--config-class",
    "config_classes",
    multiple=True,
    metavar="MODULE:CLASS",
    help="Configuration classes whose defaults are compared (default: the "
    "target's, e.g. HTEX, LocalProvider, Config; for a --command, every class of the "
    "package it may build).",
)
@click.option(
    "--safety",
    type=click.Choice(["opt-in", "netns", "keep"]),
    default="opt-in",
    show_default=True,
    help="A safety keyword perflab sets (HTEX encrypted) whose "
    "default changed: opt-in measures each release's default with --allow-insecure; "
    "netns in a private network namespace; keep measures both with perflab's.",
)
@click.option(
    "--min-effect",
    "threshold",
    type=float,
    default=0.05,
    show_default=True,
    cls=Aliased,
    old=("--threshold",),
    help="A change worth reporting (0.05: 5%): a smaller step is nothing to explain.",
)
@click.option(
    "--alpha",
    type=float,
    default=ALPHA,
    show_default=True,
    help="Level of the step test and of the Holm-corrected claims.",
)
@click.option(
    "--screen-alpha",
    type=float,
    default=0.1,
    show_default=True,
    help="A factor survives the screen below this p.",
)
@click.option("--seed", type=SEED, default=0, show_default=True, help="Order of runs.")
@precision_option(
    "on the step B/A (e.g. 3%): the rounds of the step and focus stages and the window are "
    "planned from `perflab precision`'s stored parts (instead of --runs/--tasks)"
)
@max_time_option
@click.option("--name", help="Campaign name prefix (default explain-PACKAGE-A-B).")
@click.option("--store", "store_path", type=click.Path(), help="SQLite store.")
@output_option("Write explain.json, explain.md and explain.html here.")
@json_option
def explain(
    package: str,
    name: str | None,
    store_path: str | None,
    output: str | None,
    as_json: bool,
    **o: Any,
) -> None:
    """Why is release B slower (or faster) than A? Measures the step, makes every changed
    configuration default and every changed function on the measured path a factor of B
    (reverting it to A's), screens them (Plackett–Burman), focuses on the survivors and
    prints each one's share of the step with its interval and what is left unexplained.
    Resumable: run it again after an interruption."""
    from perflab.api import explain as run_explain
    from perflab.explain.render import lines

    def on_stage(stage: str, pending: int) -> None:
        progress(f"{stage}: {pending} runs to go")

    # --metric may name several, comma-separated: the first decides, the rest are reported
    rel_a, rel_b = ends_of(o, ("rel_a", "rel_b"))
    metrics = names(o["metric"]) or [default_metric(o["command"])]
    spec = base_spec({**o, "metric": metrics[0]})
    looks, budget = None, None
    if o["precision_target"] is not None:
        metric = (metrics or [spec.metric])[0]
        pl = plan_for(spec, metric, o["precision_target"], o["max_time"], o["alpha"],
                      pilot_on=_release(spec, package, rel_a))  # fmt: skip
        spec, o["runs"] = sized(spec, pl), pl.pairs
        looks, budget = step_looks(pl, o["alpha"], o["max_time"])
        err_console.print(f"plan of the step: {pl.line()}; it stops once known")
    result = run_explain(
        package, rel_a, rel_b, spec, runs=o["runs"], metrics=metrics,
        name=name, screen_runs=o["screen_runs"], alpha=o["alpha"], threshold=o["threshold"],
        screen_alpha=o["screen_alpha"], modules=tuple(o["modules"]),
        classes=tuple(o["config_classes"]), safety=o["safety"], seed=o["seed"],
        store=store_path, output=output or None, on_stage=on_stage, step_looks=looks,
        step_budget=budget,
    )  # fmt: skip
    if as_json:
        click.echo(json.dumps(result, default=str))
    else:
        for line in lines(result):
            click.echo(line)
    if "failed" in result["verdict"]:  # runs failed: recorded, nothing explained
        sys.exit(1)


def _release(spec: RunSpec, package: str, version: str) -> RunSpec | None:
    """Release ``version``'s spec for a command's pilot (the bare base may not import the
    package); None for an engine target, whose parts ``perflab precision`` measured."""
    if spec.command is None:
        return None
    from dataclasses import replace

    from perflab.factors.requirements import check_requirement

    return replace(spec, packages=[*spec.packages, check_requirement(f"{package}=={version}")])


def step_looks(pl: Plan, alpha: float, max_time: float | None) -> tuple[Looks, tuple[float, float]]:
    """The step's looks (a history of two releases' one step: ``history_seq.step_plan``) and
    its time budget (seconds, a round's planned seconds)."""
    from perflab.compare.history_seq import step_plan
    from perflab.compare.planned import DEFAULT_MAX_TIME_S

    limit = DEFAULT_MAX_TIME_S if max_time is None else max_time
    return step_plan(pl, 2, alpha, limit).looks, (limit, pl.wall_s / max(1, pl.pairs))
