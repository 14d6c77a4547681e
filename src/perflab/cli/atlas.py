"""``perflab atlas``: unattended regression discovery over a package's commits and releases
(see docs/atlas.md). A thin shell over ``perflab.atlas``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from perflab.cli.app import json_option, main, progress

BENCH_OPTIONS = [
    click.option("--command", help="A shell command measured at each point (its wall_s)."),
    click.option("--target", help="An engine target (with --workload), e.g. parsl-htex."),
    click.option("--workload", help="The target's workload, e.g. noop."),
    click.option("--tasks", type=int, help="Tasks per run of a target."),
    click.option("--metric", help="The metric (wall_s for a command, us_per_task for a target)."),
    click.option("--runs", type=int, default=4, show_default=True, help="Runs per point."),
    click.option("--alpha", type=float, default=0.05, show_default=True,
                 help="Chance of a false step per series, and of a wrong gate decision."),
    click.option("--engine-config", help="The engine's config file."),
]  # fmt: skip


def bench_options(fn: Any) -> Any:
    for opt in reversed(BENCH_OPTIONS):
        fn = opt(fn)
    return fn


def _bench(name: str, o: dict[str, Any]) -> Any:
    from perflab.atlas.project import benchmark

    return benchmark(name, o["command"], o["target"], o["workload"], o["metric"],
                     tasks=o["tasks"], runs=o["runs"], alpha=o["alpha"],
                     engine_config=o["engine_config"])  # fmt: skip


@main.group()
def atlas() -> None:
    """Watch a package's history: measure new commits, name each step's commit and hunks."""


@atlas.command("init")
@click.argument("dir_", metavar="DIR")
@click.option("--repo", required=True, type=click.Path(), help="A git clone of the package.")
@click.option("--package", required=True, help="The package (its import name).")
@click.option(
    "--name", "bench_name", default="default", show_default=True, help="The first benchmark's name."
)
@click.option(
    "--axis",
    type=click.Choice(["commits", "releases", "both"]),
    default="commits",
    show_default=True,
    help="Measure every commit, the release tags, or both.",
)
@click.option("--since", metavar="REF", help="The oldest commit or release measured.")
@click.option("--until", metavar="REF", help="The newest commit watched (default: HEAD).")
@click.option(
    "--every",
    type=int,
    default=1,
    show_default=True,
    help="On the commits axis, measure every n-th commit (bisection finds the rest).",
)
@click.option(
    "--build",
    type=click.Choice(["tree", "venv"]),
    default="tree",
    show_default=True,
    help="A commit's package directory on PYTHONPATH, or its tree in a venv.",
)
@bench_options
def atlas_init(dir_: str, repo: str, package: str, bench_name: str, axis: str, since: str | None,
               until: str | None, every: int, build: str, **o: Any) -> None:  # fmt: skip
    """Make an atlas in DIR: perflab.toml and its store."""
    from perflab.atlas.define import init

    got = init(dir_, repo, package, _bench(bench_name, o), axis, since, every, build, until)
    click.echo(f"atlas in {dir_}: {got.package} from {got.repo}, axis {got.axis}; "
               f"next: perflab atlas update {dir_}")  # fmt: skip


@atlas.command("add")
@click.argument("dir_", metavar="DIR")
@click.argument("name")
@bench_options
def atlas_add(dir_: str, name: str, **o: Any) -> None:
    """Add benchmark NAME to the atlas in DIR."""
    from perflab.atlas.define import add

    got = add(dir_, _bench(name, o))
    click.echo(f"benchmarks: {', '.join(got.benchmarks)}")


@atlas.command("update")
@click.argument("dir_", metavar="DIR")
@click.option("--max-time", type=float, metavar="S", help="Seconds this update may take.")
@click.option("--runner", metavar="NAME",
              help="Send the series' runs through a campaign runner (parsl: e.g. to Slurm); "
              "default: the project file's runner, else this machine.")  # fmt: skip
@click.option(
    "--runner-config",
    type=click.Path(),
    metavar="FILE",
    help="The runner's config (parsl: a Parsl config file, e.g. a SlurmProvider's).",
)
@json_option
def atlas_update(dir_: str, max_time: float | None, runner: str | None,
                 runner_config: str | None, as_json: bool) -> None:  # fmt: skip
    """Measure what is new, detect, confirm and bisect steps (resumable, one at a time)."""
    from perflab.atlas.update import update
    from perflab.cli.app import resolved

    out = update(dir_, max_time, say=progress, runner=runner, runner_config=resolved(runner_config))
    if as_json:
        click.echo(json.dumps(out.to_dict(), indent=1))
        return
    measured = sum(len(v) for v in out.measured.values())
    click.echo(f"{out.new_points} new commits; {measured} points measured, {out.runs} runs, "
               f"{len(out.new_steps)} steps suspected, {out.elapsed_s:.0f} s")  # fmt: skip
    for line in out.changed:
        click.echo(line)
    for bench, skipped in out.skipped.items():
        for key, why in skipped.items():
            click.echo(f"{bench}: skipped {key[:10]}: {why}")
    for bench, why in out.failing.items():
        click.echo(f"{bench}: {why} (not a step)")
    if out.runner:
        where = ", ".join(f"{n} on {w}" for w, n in out.runner["where"].items()) or "none back"
        click.echo(f"series through the {out.runner['name']} runner: {where}")
    for line in out.queued:
        click.echo(line)


@atlas.command("status")
@click.argument("dir_", metavar="DIR")
@json_option
def atlas_status(dir_: str, as_json: bool) -> None:
    """Every benchmark's steps: ends, ratio and interval, state, culprits."""
    from perflab.atlas.triage import lines, status
    from perflab.atlas.update import open_atlas

    d, atl, store = open_atlas(dir_)
    st = status(d, store, list(atl.benchmarks))
    click.echo(json.dumps(st, indent=1) if as_json else "\n".join(lines(st)))


@atlas.command("ack")
@click.argument("dir_", metavar="DIR")
@click.argument("step", type=int)
@click.option("--note", help="Why the step is as it is.")
@click.option("--expected", is_flag=True, help="The step was expected (a known trade-off).")
def atlas_ack(dir_: str, step: int, note: str | None, expected: bool) -> None:
    """Acknowledge STEP (triage kept in the store)."""
    from perflab.atlas.triage import ack
    from perflab.atlas.update import open_atlas

    _, _, store = open_atlas(dir_)
    s = ack(store, step, note, expected)
    click.echo(f"step {s.id}: {s.state}; note: {s.note}")


@atlas.command("publish")
@click.argument("dir_", metavar="DIR")
@click.option("-o", "--output", "out", required=True, type=click.Path(), help="The site's folder.")
def atlas_publish(dir_: str, out: str) -> None:
    """Write the atlas as a static, offline site (open OUT/index.html)."""
    from perflab.atlas.site import publish
    from perflab.atlas.update import open_atlas

    d, atl, store = open_atlas(dir_)
    pages = publish(atl, store, Path(out))
    click.echo(f"{len(pages)} pages in {out}; open {Path(out) / 'index.html'}")


@atlas.command("pr")
@click.argument("dir_", metavar="DIR")
@click.option("--head", required=True, metavar="REF", help="The PR's head commit or branch.")
@click.option("--base", metavar="REF", help="Its base (default: the newest measured commit).")
def atlas_pr(dir_: str, head: str, base: str | None) -> None:
    """A PR's verdict per benchmark, as markdown, gated as the atlas confirms steps."""
    from perflab.atlas.pr import verdicts

    click.echo(verdicts(dir_, head, base, say=progress))
