"""``perflab tune``: find the best treatment set for a target, and confirm it by measurement."""

from __future__ import annotations

import json
from typing import Any

import click

from perflab.cli.app import (
    SEED,
    RegistryChoice,
    err_console,
    json_option,
    main,
    resolved,
    runner_option,
    store_option,
)
from perflab.cli.helpfmt import preset_options
from perflab.cli.precise import given, max_time_option, parse_target, precision_option
from perflab.cli.spec_options import base_spec, factor_names, factors_option, run_options
from perflab.errors import PerflabError


def _searches() -> Any:
    from perflab.tune.searches import SEARCHES

    return SEARCHES


@main.command("tune")
@preset_options
@click.argument("name")
@run_options
@factors_option("Candidate treatments; give several levels of one factor as NAME=L1,NAME=L2.")
@click.option(
    "--budget",
    type=int,
    default=100,
    show_default=True,
    help="Runs in all. A recommendation whose every member is shown needed usually takes "
    "about 15 runs per candidate (docs/tune.md); with fewer, members that could not be "
    "tested stay and are listed as not shown needed.",
)
@click.option(
    "--pairs",
    type=int,
    default=8,
    show_default=True,
    help="Blocks of the final stage: the base and each level's set, in random order, that "
    "measure the speed-ups (fewer when the budget is short, at least 3).",
)
@click.option(
    "--search",
    default="optuna",
    show_default=True,
    cls=RegistryChoice,
    registry=_searches,
    help="optuna: TPE trials, the best 3 re-measured (the better in bench/best_set.py); "
    "staged: screen, focus, confirm rounds. Every search ends with the reduction and the "
    "final blocks.",
)
@click.option("--seed", type=SEED, default=0, show_default=True)
@precision_option(
    "on the speed-ups of the final blocks (e.g. 3%): the recommended set's, and the fastest "
    "set's if it differs, against the base; the blocks and the window are planned from "
    "`perflab precision`'s stored parts (instead of --pairs/--tasks) and stop once known; "
    "--budget stays the search's and the reduction's"
)
@max_time_option
@runner_option
@click.option(
    "--runner-config",
    type=click.Path(exists=True, dir_okay=False),
    help="With --runner parsl: the Parsl config file saying where runs go (--engine-config "
    "is the measured engine's).",
)
@store_option
@json_option
def tune_cmd(
    name: str,
    factor_list: str,
    budget: int,
    pairs: int,
    seed: int,
    precision_target: str | None,
    max_time: float | None,
    search: str,
    runner: str,
    runner_config: str | None,
    store_path: str | None,
    as_json: bool,
    **o: Any,
) -> None:
    """Search the best treatment set for the target within --budget runs (TPE by default),
    reduce it to the factors the data support (a knock-out design around the pick: a factor
    stays only if the set is measurably slower without it, beyond 2%), then measure its
    speed-up over the untreated base, and that of each nice level's set (environment;
    + safe config; + source keeping features; + config disabling features; + everything):
    the set cut to the level, plus what a knock-in look shows that level needs, when the
    budget allows. The final blocks run in random order; each costlier level says what it
    gains over the nicer one. Members kept for want of runs are listed as not shown needed.
    Each stage is a campaign NAME.K-stage: run the same command again to resume."""
    from perflab.api import tune
    from perflab.tune.driver import short_budget
    from perflab.tune.render import render

    spec, final = _plan(base_spec(o), precision_target, max_time, as_json)
    candidates = factor_names(factor_list)
    # said after the first stage: by then the inputs were checked (a bad one gets one line)
    note = short_budget(budget, len(candidates))

    def on_stage(stage: str, reason: str, left: int, best: float | None) -> None:
        nonlocal note
        if note:
            err_console.print(f"note: {note}")
            note = ""
        so_far = f"fastest run so far {best:,.1f}" if best is not None else "no run ok so far"
        # a --precision plan's final blocks may run past the budget: they are the plan's
        left_s = f"{left} runs left" if left >= 0 else f"{-left} runs past --budget (the plan's)"
        err_console.print(f"[bold]{stage}[/bold]: {reason}; {left_s}; {so_far}")

    from perflab.campaign.runners import RUNNERS

    # the runner, its options and (parsl) its config's batch system, before a stage is stored
    RUNNERS.get(runner)(parsl_config=resolved(runner_config))
    result = tune(
        name, spec, candidates, budget, catalogs=list(o["catalogs"]), seed=seed,
        pairs=pairs, search=search, runner=runner, runner_config=runner_config,
        on_stage=on_stage, store=store_path, precision=final,
    )  # fmt: skip
    if as_json:
        click.echo(json.dumps(result))
        return
    click.echo(render(result))


def _plan(spec: Any, target: str | None, max_time: float | None, quiet: bool) -> tuple[Any, Any]:
    """The spec with the planned window and the final blocks' plan (``tune.precise``); the
    plan at its largest is printed, and refused (exit 2, nothing run) past --max-time.
    Without a target: the spec as it is, no plan."""
    import dataclasses

    from perflab.compare.planned import DEFAULT_MAX_TIME_S
    from perflab.tune.precise import plan_final

    if target is None:
        if max_time is not None:
            raise PerflabError("--max-time bounds the final blocks of --precision: give it")
        return spec, None

    clash = given("pairs", "tasks", "time_s")
    if clash:
        raise PerflabError(f"--precision plans the final blocks and the window: drop "
                           f"{', '.join(clash)}")  # fmt: skip
    limit = DEFAULT_MAX_TIME_S if max_time is None else max_time
    pl, final = plan_final(spec, spec.metric, parse_target(target), limit)
    if not quiet:
        err_console.print(f"plan of the final blocks at their largest: {pl.line()}")
        final.say = lambda line: err_console.print(line)
    return dataclasses.replace(spec, tasks=pl.tasks, time_s=None), final
