"""``perflab explain``: which change between two releases (a default, a function) costs how
much of the step between them (``perflab.explain``)."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

import click

from perflab.cli.app import SEED, err_console, json_option, main, output_option, runs_option
from perflab.cli.spec_options import base_spec, run_options
from perflab.compare.gate import DERIVED
from perflab.errors import PerflabError
from perflab.run.measure import validate
from perflab.run.record import METRICS


def _setup(o: dict[str, Any], package: str, a: str, b: str, name: str | None) -> Any:
    from perflab.explain.plan import Setup

    spec = base_spec(o)
    validate(spec)
    metrics = [m.strip() for m in (o["by_metric"] or "").split(",") if m.strip()] or [
        spec.metric if spec.command else "us_per_task"
    ]
    for m in metrics:
        if m not in METRICS and m not in DERIVED:
            raise PerflabError(f"unknown metric {m!r} for --by")
    if o["runs"] < 3:
        raise PerflabError(f"--runs must be at least 3 rounds (got {o['runs']})")
    name = name or re.sub(r"[^A-Za-z0-9_.-]", "_", f"explain-{package}-{a}-{b}")
    return Setup(
        name=name,
        package=package,
        a=a,
        b=b,
        base=spec,
        metrics=metrics,
        runs=o["runs"],
        screen_reps=o["screen_runs"],
        alpha=o["alpha"],
        threshold=o["threshold"],
        screen_alpha=o["screen_alpha"],
        modules=tuple(o["modules"]),
        classes=tuple(o["config_classes"]),
        safety=o["safety"],
        seed=o["seed"],
    )


@main.command()
@run_options
@click.option("--package", default="parsl", show_default=True, help="Package of the releases.")
@click.option("--from", "rel_a", required=True, metavar="A", help="The older release.")
@click.option("--to", "rel_b", required=True, metavar="B", help="The newer release.")
@runs_option(6, "Rounds of the step and focus stages (every condition once per round).")
@click.option(
    "--screen-runs",
    type=int,
    default=0,
    help="Replicates of the screen's design (default: the fewest that leave 4 degrees of freedom).",
)
@click.option(
    "--by",
    "by_metric",
    help="Metric(s), comma-separated; the first decides "
    "(default us_per_task, or the command's --metric); also cpu_us_per_task.",
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
    "target's, e.g. HTEX, LocalProvider, Config).",
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
    "--threshold",
    type=float,
    default=0.05,
    show_default=True,
    help="A smaller step is nothing to explain.",
)
@click.option(
    "--alpha",
    type=float,
    default=0.05,
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
@click.option("--name", help="Campaign name prefix (default explain-PACKAGE-A-B).")
@click.option("--store", "store_path", type=click.Path(), help="SQLite store.")
@output_option("Write explain.json, explain.md and explain.html here.")
@json_option
def explain(
    package: str,
    rel_a: str,
    rel_b: str,
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
    from perflab.campaign.store import Store
    from perflab.explain.driver import explain as run_explain
    from perflab.explain.render import lines, markdown, page
    from perflab.files import atomic_write

    setup = _setup(o, package, rel_a, rel_b, name)

    def on_stage(stage: str, pending: int) -> None:
        if not as_json:
            err_console.print(f"[dim]{stage}: {pending} runs to go …[/dim]")

    result = run_explain(lambda: Store(store_path), setup, on_stage)
    if output:
        out = Path(output)
        out.mkdir(parents=True, exist_ok=True)
        atomic_write(out / "explain.json", json.dumps(result, indent=1, default=str))
        atomic_write(out / "explain.md", markdown(result))
        atomic_write(out / "explain.html", page(result))
    if as_json:
        click.echo(json.dumps(result, default=str))
    else:
        for line in lines(result):
            click.echo(line)
    if "failed" in result["verdict"]:  # runs failed: recorded, nothing explained
        sys.exit(1)
