"""``perflab postprocess``: the seed's post-processing study (sweeps, charts, model check)."""

from __future__ import annotations

import json
from pathlib import Path

import click

from perflab.cli.app import main
from perflab.errors import PerflabError


@main.group("postprocess")
def postprocess() -> None:
    """Retrieve-one vs drain-many: sweep the seed's four parameters, chart, check the model."""


@postprocess.command("run")
@click.argument("out", type=click.Path(file_okay=False))
@click.option(
    "--engines",
    default="cf-processes,workqueue",
    show_default=True,
    help="Comma-separated engines.",
)
@click.option("--reps", type=int, default=3, show_default=True, help="Runs per point.")
@click.option(
    "--scale",
    type=float,
    default=0.2,
    show_default=True,
    help="Multiplies the seed's 1 s task and post-process times.",
)
@click.option("--seed-scale", is_flag=True, help="The seed's own times (1 s base; long).")
@click.option("--tasks", type=int, default=100, show_default=True, help="Base max tasks.")
@click.option("--base-only", is_flag=True, help="Only the base point (both policies).")
def run_cmd(
    out: str, engines: str, reps: int, scale: float, seed_scale: bool, tasks: int, base_only: bool
) -> None:
    """Measure every sweep point not yet in OUT/points.jsonl (resumable), then chart."""
    from perflab.engines import ENGINES
    from perflab.studies.postprocess import design, run_study

    names = [e for e in engines.split(",") if e]
    for name in names:
        ENGINES.get(name)
    points = design(names, 1.0 if seed_scale else scale, reps, tasks, base_only)
    run_study(points, Path(out), progress=lambda s: click.echo(s, err=True))
    _report(Path(out))


@postprocess.command("report")
@click.argument("out", type=click.Path(file_okay=False))
@click.option("--json", "as_json", is_flag=True, help="Print the summary as one JSON object.")
def report_cmd(out: str, as_json: bool) -> None:
    """Charts (OUT/postprocess_<engine>.png|svg) and OUT/summary.json from OUT/points.jsonl."""
    summary = _report(Path(out))
    click.echo(json.dumps(summary) if as_json else _text(summary))


def _report(out: Path) -> dict:
    from perflab.studies.postprocess import report

    if not (out / "points.jsonl").exists():
        raise PerflabError(f"{out}/points.jsonl: no study there (run `perflab postprocess run`)")
    return report(out)


def _text(summary: dict) -> str:
    lines = []
    for g in summary["base_gain"]:
        lo, hi = g["gain_ci"]
        ci = f"95% CI {100 * lo:.1f}..{100 * hi:.1f}%" if lo is not None else "one run each"
        lines.append(
            f"{g['engine']}: base makespan retrieve-one {g['retrieve_one_s']:.2f} s, "
            f"drain-many {g['drain_many_s']:.2f} s, gain {100 * g['gain']:.1f}% "
            f"({ci}; model {100 * g['model_gain']:.1f}%; the seed's Coffea run: 20%)"
        )
    for engine, charts in summary["gains"].items():
        for chart, series in charts.items():
            cells = [
                f"{g['level']:g}: {100 * g['gain']:+.0f}%"
                + (
                    f" [{100 * g['gain_ci'][0]:+.0f},{100 * g['gain_ci'][1]:+.0f}]"
                    if g["gain_ci"][0] is not None
                    else ""
                )
                for g in series
            ]
            lines.append(f"{engine} gain by {chart}: " + "; ".join(cells))
    for engine, e in summary["model_error"].items():
        lines.append(
            f"{engine}: model error median {100 * e['median']:+.1f}%, 5..95% "
            f"{100 * e['p5']:+.1f}..{100 * e['p95']:+.1f}%, within 10%: "
            f"{100 * e['within_10pct']:.0f}% of {e['runs']} runs, "
            f"{100 * e['by_point']['within_10pct']:.0f}% of {e['by_point']['runs']} points "
            f"(worst point {100 * e['by_point']['worst']:+.1f}%)"
        )
    lines += [f"chart: {p}" for p in summary["charts"]]
    return "\n".join(lines)
