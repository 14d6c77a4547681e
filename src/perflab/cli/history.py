"""``perflab history``: one benchmark across releases of a package, with change points."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from perflab.cli.app import SEED, Aliased, err_console, json_option, main, output_option, progress
from perflab.cli.compare import ALPHA, gate_metric
from perflab.cli.helpfmt import preset_options
from perflab.cli.precise import max_time_option, plan_for, precision_option, sized
from perflab.cli.ranges import ends_of, range_option
from perflab.cli.spec_options import base_spec, run_options
from perflab.cli.spelling import Deprecated
from perflab.compare.history import (
    History,
    Release,
    history_figure,
    release_specs,
    run_history,
)
from perflab.compare.history_seq import StepPlan
from perflab.compare.precision import Plan
from perflab.compare.render import history_html, history_markdown, print_history
from perflab.errors import Unanswerable
from perflab.files import atomic_write
from perflab.prepare import Prepared, prepare
from perflab.run.measure import validate
from perflab.spec import RunSpec


@main.command()
@preset_options
@run_options
@click.option(
    "--package",
    "package",
    default="parsl",
    show_default=True,
    help="The package whose releases are measured.",
)
@range_option(
    "Releases of --package: A..B every release the index lists from A to B, or a list "
    "A,B,C (oldest first); each is installed into a cached venv.",
    lists=True,
)
@click.option("--versions", cls=Deprecated, now="--range A,B,C")
@click.option("--runs", type=int, default=4, show_default=True, help="Runs per release.")
@click.option(
    "--min-effect",
    "threshold",
    type=float,
    default=0.05,
    show_default=True,
    cls=Aliased,
    old=("--threshold",),
    help="A change worth reporting (0.05: 5%): a smaller change point is not confirmed.",
)
@click.option(
    "--alpha",
    type=float,
    default=ALPHA,
    show_default=True,
    help="False-alarm rate over all adjacent pairs.",
)
@click.option("--seed", type=SEED, default=0, show_default=True, help="Order of runs in rounds.")
@precision_option(
    "on each step between neighbouring releases (e.g. 3%): the runs per release and the "
    "window are planned from `perflab precision`'s stored parts (instead of --runs/--tasks)"
)
@max_time_option
@output_option(
    "Write history.json, history.md, history.html (an offline page) and the figure "
    "(PNG, SVG) in this folder.",
    old=("--out",),
)
@json_option
def history(
    package: str,
    runs: int,
    threshold: float,
    alpha: float,
    seed: int,
    precision_target: str | None,
    max_time: float | None,
    output: str | None,
    as_json: bool,
    **o: Any,
) -> None:
    """Measure the same benchmark on each release of a package (e.g. --range
    2024.6.3,2025.6.2,…), in rounds of random order, and find change points (PELT, each
    confirmed by the compare gate on the two releases around it)."""
    by_metric = gate_metric(o)
    spec = base_spec(o)
    validate(spec)
    wanted = releases(package, ends_of(o, ("versions",), lists=True), o)
    pl, steps, budget = None, None, None
    if precision_target is not None:
        # a command's pilot runs on the first release (the bare base may not import it)
        first = release_specs(spec, package, wanted)[0].spec if spec.command else None
        pl = plan_for(spec, by_metric, precision_target, max_time, alpha, max(2, len(wanted)),
                      pilot_on=first)  # fmt: skip
        spec, runs = sized(spec, pl), pl.pairs
        steps, budget = planned_steps(pl, len(wanted), alpha, max_time)
        err_console.print(f"plan: {pl.line()}; each step stops once known")

    def prepared(s: RunSpec) -> Prepared:
        progress(f"environment {', '.join(s.packages)}")
        return prepare(s)

    def each_run(i: int, n: int, rel: Release) -> None:
        progress(f"run {i}/{n} ({package} {rel.version})")

    hist = run_history(package, wanted, spec, runs, by_metric, threshold, alpha, seed, prepared,
                       each_run, steps, budget or (lambda: False))  # fmt: skip
    data = hist.to_dict()
    if pl:
        data["precision"] = {"plan": pl.to_dict(), **(hist.precision or {})}
    if output:
        write(Path(output), hist, data)
    if as_json:
        click.echo(json.dumps(data))
    else:
        print_history(hist)
        for line in (hist.precision or {}).get("lines", []):
            click.echo(line)
    why = hist.unanswered()
    if why:  # what was measured is shown and written; the gap is the exit code's
        raise Unanswerable(f"history {package}: {why}")


def releases(package: str, ends: list[str], o: dict[str, Any]) -> list[str]:
    """The releases measured: a list as given; ``A..B`` every release from A to B."""
    if o.get("ends") and ".." in o["ends"]:
        from perflab.bisect.releases import between, index_versions

        return between(index_versions(package), *ends)
    return ends


def write(out: Path, hist: History, data: dict[str, Any]) -> None:
    """history.json (``data``), history.md, history.html and the figure in ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    atomic_write(out / "history.json", json.dumps(data, indent=1))
    png = None
    if any(r.values for r in hist.releases):
        png = history_figure(hist, out)[0].read_bytes()
    atomic_write(out / "history.md", history_markdown(hist))
    atomic_write(out / "history.html", history_html(hist, png))


def planned_steps(
    pl: Plan, releases: int, alpha: float, max_time: float | None
) -> tuple[StepPlan, Callable[[], bool]]:
    """Each step's looks for a history planned as ``pl``, and the time budget's test for
    ``run_history`` (a round of every release must fit in what is left of it)."""
    from perflab.compare.history_seq import deadline, step_plan
    from perflab.compare.planned import DEFAULT_MAX_TIME_S

    limit = DEFAULT_MAX_TIME_S if max_time is None else max_time
    round_s = pl.wall_s / max(1, pl.pairs)
    return step_plan(pl, releases, alpha, limit), deadline(limit, round_s)
