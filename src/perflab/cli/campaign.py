"""``perflab campaign``: plan, run (resumably), and inspect campaigns."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from typing import Any

import click

from perflab import api
from perflab.campaign.store import Store
from perflab.cli.app import (
    SEED,
    Aliased,
    json_option,
    kv,
    kv_option,
    main,
    registry_option,
    resolved,
    runner_option,
    runs_option,
    shown_warnings,
    store_option,
)
from perflab.cli.helpfmt import preset_options
from perflab.cli.precise import (
    given,
    max_time_option,
    parse_target,
    plan_for,
    precision_option,
    sized,
)
from perflab.cli.spec_options import base_spec, factor_names, factors_option, run_options
from perflab.errors import PerflabError
from perflab.report import campaign_text


def _designs() -> Any:
    from perflab.campaign.designs import DESIGNS

    return DESIGNS


def fastest_options(stored: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """``--fastest [--min-effect F] [--alpha F]``: the campaign's goal is its fastest set
    (``campaign/running.py``); ``stored`` says how the verb keeps it."""

    def add(f: Callable[..., Any]) -> Callable[..., Any]:
        for o in reversed([
            click.option("--fastest", is_flag=True, help="The question is which set is "
                         "fastest: a set also stops (its runs not needed) once it is clearly "
                         "slower than the best, its interval wholly above the best's by more "
                         "than --min-effect at a level that accounts for every set and look "
                         f"(--alpha). {stored} Without it, sets stop only at --precision's "
                         "target."),
            click.option("--min-effect", "threshold", type=float, default=None, cls=Aliased,
                         old=("--threshold",), help="With --fastest: how "
                         "much slower than the best a set must clearly be to stop (default "
                         "0.05: 5%)."),
            click.option("--alpha", type=float, default=None, help="With --fastest: the "
                         "chance of stopping any set within --min-effect of the fastest, over "
                         "all sets and looks (default 0.05)."),
        ]):  # fmt: skip
            f = o(f)
        return f

    return add


@main.group()
def campaign() -> None:
    """Campaigns: designs of treatment sets, run (and resumed) into the store."""


@campaign.command("create")
@preset_options
@click.argument("name")
@run_options
@factors_option("The campaign's two-level factors (a levelled factor as NAME=LEVEL).")
@registry_option(
    "--design", registry=_designs, default="random", help="How treatment sets are chosen."
)
@kv_option(
    "--design-opt",
    "design_opts",
    "Design option, e.g. runs=32, resolution=5, sequences=8, file=sets.txt.",
)
@runs_option(1, "Runs of each set (interleaved, never back to back).", old=("--replicates",))
@click.option(
    "--budget",
    help="A cap: a number of runs (refused if the design needs more) "
    "or a duration like 90m (campaign run stops when it is spent).",
)
@click.option("--seed", type=SEED, help="Random seed for the design and the run order.")
@precision_option(
    "on every effect (e.g. 3%): the runs of each set and the window are planned for the "
    "design from `perflab precision`'s stored parts (instead of --runs/--tasks)"
)
@max_time_option
@fastest_options("Stored with the campaign: `campaign run` stops sets so without being told.")
@store_option
@json_option
def campaign_create(
    name: str,
    factor_list: str,
    design: str,
    design_opts: tuple[str, ...],
    runs: int,
    budget: str | None,
    seed: int | None,
    precision_target: str | None,
    max_time: float | None,
    fastest: bool,
    threshold: float | None,
    alpha: float | None,
    store_path: str | None,
    as_json: bool,
    **o: Any,
) -> None:
    """Plan campaign NAME and store its plan (nothing runs yet)."""
    from perflab.analysis.reach import design_scale, design_x
    from perflab.campaign import running
    from perflab.campaign.plan import create_campaign

    spec, plans = base_spec(o), []
    goal = running.asked(fastest, threshold, alpha)

    def sizer(sets: list[list[str]], factors: list[str]) -> tuple[int, Any, float]:
        scale = design_scale(design_x(sets, factors), factors)
        pl = plan_for(spec, spec.metric, str(precision_target), max_time, 0.05, len(sets), scale)
        plans.append(pl)
        return pl.pairs, sized(spec, pl), pl.target

    store = Store(store_path)
    c = create_campaign(
        store, name, spec, factor_names(factor_list), design, kv(design_opts, "--design-opt"),
        runs, budget, list(o["catalogs"]), seed, sizer if precision_target else None, goal,
    )  # fmt: skip
    created = {**c.to_dict(), "counts": store.counts(name)}
    created["goal"] = "effects" if goal is None else "fastest"
    if plans:
        created["precision"] = {"plan": plans[0].to_dict()}
    if as_json:
        click.echo(json.dumps(created))
        return
    click.echo(
        f"campaign {name}: {created['sets']} sets x {c.replicates} runs = "
        f"{created['counts']['planned']} runs ({design}); run it with: perflab campaign run {name}"
    )
    if plans:
        click.echo(f"planned for ±{plans[0].target:.1%} on every effect: {plans[0].line()}")
    if goal is not None:
        click.echo(f"goal: the fastest set; {running.spent(goal, c.replicates, c.sets)['line']}")


@campaign.command("extend")
@click.argument("name")
@click.option(
    "--factors",
    "factor_list",
    default=None,
    metavar="A,B",
    help="New factors, off in every earlier run; each planned set is run again with each "
    "new factor added (exact pairs).",
)
@registry_option(
    "--design",
    registry=_designs,
    default=None,
    help="Another design over the campaign's factors (sets already planned are skipped).",
)
@kv_option("--design-opt", "design_opts")
@runs_option(1, "Runs of each new set.", old=("--replicates",))
@click.option("--seed", type=SEED, help="Random seed for the design and the run order.")
@precision_option(
    "on every effect (e.g. 3%): more runs of the sets already planned, as many as the runs "
    "stored predict (instead of --factors/--design)"
)
@max_time_option
@store_option
@json_option
def campaign_extend(
    name: str,
    factor_list: str | None,
    design: str | None,
    design_opts: tuple[str, ...],
    runs: int,
    seed: int | None,
    precision_target: str | None,
    max_time: float | None,
    store_path: str | None,
    as_json: bool,
) -> None:
    """Grow campaign NAME by new factors or another design, or by the runs that reach
    --precision: one campaign, one dataset."""
    if precision_target is not None:
        return _extend_to(name, precision_target, max_time, seed, store_path, as_json)
    factors = factor_names(factor_list)
    with shown_warnings():
        rec = api.campaign_extend(
            name, factors, design, kv(design_opts, "--design-opt"), runs, seed, store_path
        )
    counts = rec["counts"]
    if as_json:
        click.echo(json.dumps(rec))
    else:
        what = f"factors {', '.join(factors)}" if factors else f"design {design}"
        click.echo(
            f"campaign {name} extended by {what}: {rec['sets']} sets x {runs} "
            f"runs = {rec['runs']} runs planned ({counts['planned']} in all); "
            f"run them with: perflab campaign run {name}"
        )


def _extend_to(
    name: str, target: str, max_time: float | None, seed: int | None, store_path: str | None,
    as_json: bool,
) -> None:  # fmt: skip
    """``campaign extend --precision``: plan, print the plan, store it (or refuse it)."""
    from perflab.campaign.extend import extend_to_precision
    from perflab.compare.planned import DEFAULT_MAX_TIME_S

    clash = given("factor_list", "design", "design_opts", "runs")
    if clash:
        raise PerflabError(f"--precision plans more runs of the sets already planned: drop "
                           f"{', '.join(clash)}")  # fmt: skip
    limit = DEFAULT_MAX_TIME_S if max_time is None else max_time
    st = Store(store_path)
    rec = extend_to_precision(st, name, parse_target(target), limit, seed)
    counts = st.counts(name)
    if as_json:
        click.echo(json.dumps({**rec, "counts": counts}))
    else:
        click.echo(f"plan for ±{rec['precision']:.1%} on every effect: {rec['plan']}")
        if rec.get("left_out_line"):
            click.echo(rec["left_out_line"])
        click.echo(f"campaign {name} extended: {rec['runs']} runs planned ({counts['planned']} "
                   f"in all); run them with: perflab campaign run {name}")  # fmt: skip


@campaign.command("run")
@click.argument("name")
@runner_option
@click.option(
    "--runner-config", "parsl_config", type=click.Path(), cls=Aliased, old=("--parsl-config",),
    help="With --runner parsl: the Parsl config file saying where runs go.",
)  # fmt: skip
@click.option("--max-runs", type=int, help="Stop after this many runs (resume later).")
@fastest_options(
    "Stored with the campaign (as `campaign create --fastest` stores it): a resumed run keeps "
    "it; another --min-effect or --alpha is taken only before the first run."
)
@store_option
@json_option
def campaign_run(
    name: str,
    runner: str,
    parsl_config: str | None,
    max_runs: int | None,
    fastest: bool,
    threshold: float | None,
    alpha: float | None,
    store_path: str | None,
    as_json: bool,
) -> None:
    """Run (or resume) campaign NAME: each finished run is committed at once."""
    from perflab.campaign import running, stopping

    store = Store(store_path)
    options = {"parsl_config": resolved(parsl_config)}
    chosen = api.campaign_check_run(name, runner, max_runs, store, **options)
    before = store.counts(name)  # the bar is on stderr: shown also with --json
    goal = running.resolve(store.campaign(name), fastest, threshold, alpha, before["done"] > 0)
    with shown_warnings():
        with campaign_text.campaign_progress(name, before["planned"], before["done"]) as bar:
            counts = api.campaign_run(name, chosen, max_runs, bar[1], store, on_start=bar[0],
                                      on_skip=bar[2], fastest=goal)  # fmt: skip
        stopped = stopping.stopped(store.campaign(name))
        if as_json:
            click.echo(json.dumps({**counts, "stopped": stopped}))
        else:
            campaign_text.print_counts(name, counts, stopped)
    if counts["unmeasured"]:
        last = store.unmeasured(name)[-1]
        click.echo(
            f"perflab: run {last['seq']} of {name} was not measured: "
            f"{' '.join(last['cause'].split())[:300]} — fix that and run again to resume",
            err=True,
        )
    if counts["unmeasured"] or counts["failed"] or counts["timeout"]:
        sys.exit(1)


@campaign.command("status")
@click.argument("name")
@precision_option("on every effect (e.g. 3%): the more runs and hours it needs, predicted "
                  "from the measured variance (default: the campaign's own, else 5%)")  # fmt: skip
@store_option
@json_option
def campaign_status(
    name: str, precision_target: str | None, store_path: str | None, as_json: bool
) -> None:
    """Planned/done/failed, ETA, the latest and the fastest runs of NAME, and its precision
    per hour: the CI half-width each effect reached and what more runs would buy."""
    from perflab.campaign.plan import status

    target = parse_target(precision_target) if precision_target else None
    st = status(Store(store_path), name, target)
    if as_json:
        click.echo(json.dumps(st))
    else:
        campaign_text.print_status(st)


@campaign.command("list")
@store_option
@json_option
def campaign_list(store_path: str | None, as_json: bool) -> None:
    """Every campaign in the store with its counts."""
    store = Store(store_path)
    rows = api.campaigns(store)
    if as_json:
        click.echo(json.dumps(rows))
    else:
        campaign_text.print_campaigns(rows, str(store.path))
