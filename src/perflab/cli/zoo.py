"""``perflab zoo``: the lab's scoreboard across engines (Task Bench's METG and DAG
patterns), stored as a campaign and resumable with ``campaign run``. ``zoo --metg`` is the
METG sweep alone; ``perflab metg -t ENGINE``, its old name, stays for one release."""

from __future__ import annotations

import json
from typing import Any

import click
from click.core import ParameterSource

from perflab.analysis.zoo import unanswered
from perflab.campaign.plan import run_campaign
from perflab.campaign.store import Store
from perflab.cli.app import (
    SEED,
    Aliased,
    json_option,
    main,
    names,
    output_option,
    progress,
    runs_option,
    store_option,
)
from perflab.cli.precise import max_time_option, parse_target, precision_option
from perflab.cli.spec_options import timeout_option
from perflab.cli.spelling import Deprecated
from perflab.errors import PerflabError, Unanswerable
from perflab.report import campaign_text
from perflab.zoo.suite import (
    DEFAULT_LEVELS,
    ZooConfig,
    default_targets,
)


def _levels(text: str | None) -> list[float]:
    if text is None:
        return list(DEFAULT_LEVELS)
    out = []
    for item in names(text) or []:
        try:
            out.append(float(item))
        except ValueError:
            raise PerflabError(f"--levels: {item!r} is not a number of microseconds") from None
    return out


def _count(text: str, option: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise PerflabError(f"{option}: {text!r} is not a number of tasks") from None


#: The options ``zoo`` and ``metg`` share, in the order ``--help`` lists them.
_SHARED = [
    click.option(
        "--levels",
        metavar="US,US,...",
        help="First METG task sizes in µs "
        f"(default {','.join(f'{v:g}' for v in DEFAULT_LEVELS)}); the search then "
        "steps outwards and bisects until the crossing is bracketed.",
    ),
    click.option(
        "--fixed-levels",
        is_flag=True,
        help="Measure the --levels only (no search: the METG may be a bound).",
    ),
    click.option(
        "--point-s",
        type=float,
        default=0.5,
        show_default=True,
        help="Ideal seconds of work per METG run (sets its number of tasks).",
    ),
    runs_option(3, "Times each measurement is repeated (interleaved).", old=("--replicates",)),
    precision_option(
        "on each measurement's wall time (e.g. 3%): after the --runs rounds (the pilot) and "
        "the METG search, each measurement is repeated until its 95% interval is within it, "
        "planned from the pilot's spread (each run's number of tasks stays as it was)"
    ),
    max_time_option,
    click.option("--workers", type=int, help="Workers per engine (default: cores)."),
    click.option(
        "--kernel",
        default="hash",
        show_default=True,
        help="hash (releases the GIL, like NumPy work) or spin (holds it).",
    ),
    click.option(
        "--metg-tasks",
        type=int,
        default=100,
        show_default=True,
        help="Fewest tasks per METG run (more where --point-s asks for them).",
    ),
    click.option(
        "--efficiency",
        "threshold",
        type=float,
        default=0.5,
        show_default=True,
        cls=Aliased,
        old=("--threshold",),
        help="The efficiency METG is the smallest task size at (0.5: 50%).",
    ),
    click.option(
        "--basis",
        default="peak",
        show_default=True,
        help="Efficiency relative to the kernel's calibrated peak, or to the largest task size.",
    ),
    timeout_option,
    click.argument("name", required=False),
    click.option("--name", "old_name", cls=Deprecated, now="a positional NAME"),
    output_option("Write zoo.html here."),
    click.option("--seed", type=SEED, help="Random seed for the run order."),
    store_option,
    json_option,
]


def zoo_options(f: Any) -> Any:
    for opt in reversed(_SHARED):
        f = opt(f)
    return f


@main.command("zoo")
@click.option(
    "--metg",
    is_flag=True,
    help="METG alone: sweep task granularity on each of --targets and find the smallest "
    "task that is still efficient (was `perflab metg`).",
)
@click.option(
    "--targets",
    help="Engines (default: every engine that expresses task dependencies; "
    "`perflab plugins engine` lists them).",
)
@click.option(
    "--workloads",
    default="metg,chain,fan",
    show_default=True,
    help="metg (granularity sweep of `compute`), chain, fan, tree, stencil_1d, wfcommons "
    "(real workflows: --recipes at --wf-sizes).",
)
@click.option(
    "--recipes",
    default="montage,epigenomics,blast",
    show_default=True,
    help="WfCommons recipes of the workflow rows.",
)
@click.option(
    "--wf-sizes", default="100,1000", show_default=True, help="Tasks per workflow (each size)."
)
@click.option(
    "--wf-task-ms",
    type=float,
    default=10.0,
    show_default=True,
    help="Mean task runtime of a workflow after scaling its trace runtimes (ms).",
)
@click.option(
    "--dag-tasks", type=int, default=1000, show_default=True, help="Tasks per DAG pattern run."
)
@click.option(
    "--dag-task-us", type=float, help="Work per DAG task in µs (default: chain 0, the others 1000)."
)
@zoo_options
def zoo_cmd(
    metg: bool,
    targets: str | None,
    workloads: str,
    recipes: str,
    wf_sizes: str,
    wf_task_ms: float,
    dag_tasks: int,
    dag_task_us: float | None,
    **o: Any,
) -> None:
    """Run the standard suite across engines and print the scoreboard (with --metg: each
    engine's METG alone)."""
    if metg:
        if click.get_current_context().get_parameter_source("workloads") in (
            ParameterSource.COMMANDLINE, ParameterSource.ENVIRONMENT,
        ):  # fmt: skip
            raise PerflabError("--metg is the METG row alone: drop --workloads")
        _run(_config(o, names(targets) or default_targets(), ["metg"]), o, "metg")
        return
    cfg = _config(o, names(targets) or default_targets(), names(workloads) or [])
    cfg.dag_tasks, cfg.dag_task_us = dag_tasks, dag_task_us
    cfg.recipes, cfg.wf_task_ms = names(recipes) or [], wf_task_ms
    cfg.wf_sizes = [_count(x, "--wf-sizes") for x in names(wf_sizes) or []]
    _run(cfg, o, "zoo")


@main.command("metg", hidden=True)
@click.option("--target", "-t", required=True, help="The engine.")
@zoo_options
def metg_cmd(target: str, **o: Any) -> None:
    """The old name of `perflab zoo --metg --targets ENGINE` (kept for one release): METG(50%)
    of one engine, where efficiency halves as tasks get smaller."""
    click.echo("perflab: `metg -t ENGINE` is now `perflab zoo --metg --targets ENGINE`; the "
               "old name goes in the next release", err=True)  # fmt: skip
    _run(_config(o, [target], ["metg"]), o, "metg")


def _config(o: dict[str, Any], targets: list[str], kinds: list[str]) -> ZooConfig:
    if o["precision_target"] is not None and o["runs"] < 2:
        raise PerflabError("--precision plans from the pilot's spread: give --runs 2 or more")
    if o["precision_target"] is None and o["max_time"] is not None:
        raise PerflabError("--max-time bounds the rounds of --precision: give --precision")
    return ZooConfig(
        targets=targets,
        kinds=kinds,
        levels=_levels(o["levels"]),
        replicates=o["runs"],
        metg_tasks=o["metg_tasks"],
        point_s=o["point_s"],
        adaptive=not o["fixed_levels"],
        timeout_s=o["timeout_s"],
        workers=o["workers"],
        kernel=o["kernel"],
    )


def _round(store: Store, name: str) -> dict[str, int]:
    before = store.counts(name)  # the bar is on stderr: shown also with --json
    with campaign_text.campaign_progress(name, before["planned"], before["done"]) as (
        start,
        on_result,
        _,
    ):
        return run_campaign(store, name, on_result=on_result, on_start=start)


def _run(cfg: ZooConfig, o: dict[str, Any], prefix: str) -> None:
    from perflab.api import zoo

    def levels(items: list[dict[str, Any]]) -> None:
        levels = ", ".join(f"{i['spec']['target']} {i['spec']['params']['task_us']:g} µs"
                           for i in items)  # fmt: skip
        progress(f"METG search, next levels: {levels}")

    result = zoo(
        cfg, o["name"] or o["old_name"], prefix, o["seed"], o["threshold"], o["basis"], o["output"],
        o["store_path"], _round, levels,
        **_precise(o),
    )  # fmt: skip
    if o["as_json"]:
        click.echo(json.dumps(result, default=float))
    else:
        from perflab.report.zoo import print_zoo

        print_zoo(result["table"], result["rows"], result["name"])
        if result.get("precision"):
            click.echo(result["precision"]["line"])
    why = unanswered(result["table"])
    if why:  # the scoreboard is shown and stored; what it lacks is the exit code's
        raise Unanswerable(f"zoo {result['name']!r}: {why}")


def _precise(o: dict[str, Any]) -> dict[str, Any]:
    """``--precision``/``--max-time`` as ``run_zoo``'s keywords (none without a target)."""
    from perflab.compare.planned import DEFAULT_MAX_TIME_S

    if o["precision_target"] is None:
        return {}
    limit = DEFAULT_MAX_TIME_S if o["max_time"] is None else o["max_time"]
    say = None if o["as_json"] else click.echo
    return {"precision": parse_target(o["precision_target"]), "max_time_s": limit, "say": say}
