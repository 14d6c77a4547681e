"""``perflab precision``: measure a benchmark's variance parts and store them, for
``compare --precision`` (compare/planned.py)."""

from __future__ import annotations

import dataclasses
import json
import math
from typing import Any

import click

from perflab.cli.app import json_option, main
from perflab.cli.compare import decision_options, fresh_runs, gate_metric
from perflab.cli.spec_options import base_spec, run_options
from perflab.compare import parts as mp
from perflab.compare import precision as pp
from perflab.compare.calibrate import signature
from perflab.errors import PerflabError
from perflab.files import home_dir
from perflab.prepare import prepare
from perflab.run.measure import validate


@main.command()
@run_options
@decision_options
@click.option("--runs", type=int, default=8, show_default=True, help="Fresh runs (A/A).")
@click.option(
    "--splits",
    type=int,
    default=8,
    show_default=True,
    help="Sub-batches each run's counted window is split into (for the within-run noise).",
)
@json_option
def precision(
    runs: int,
    splits: int,
    threshold: float,
    alpha: float,
    by_metric: str | None,
    as_json: bool,
    **o: Any,
) -> None:
    """Measure this machine's variance parts for a benchmark — the fixed seconds per run S,
    seconds per task c, the between-run and the within-window variance (with 95 %
    intervals) — and store them for `compare --precision`. Give --tasks for the window
    (default 2,000 tasks)."""
    metric = gate_metric({**o, "side_command_a": None, "side_command_b": None}, by_metric)
    if splits < 2 or runs < mp.MIN_RUNS:
        raise PerflabError(f"--splits must be at least 2 and --runs at least {mp.MIN_RUNS}")
    spec = base_spec(o)
    if spec.command is not None:
        raise PerflabError("precision measures engine targets (a command has no window)")
    tasks = spec.tasks or 2000
    spec = dataclasses.replace(spec, tasks=tasks, time_s=None, window_splits=splits)
    validate(spec)
    prepared = prepare(spec)  # once, for every run
    spec = prepared.spec
    got = fresh_runs(prepared, runs, lambda rec: mp.from_record(rec.to_dict(), metric), as_json)
    measured = mp.estimate(got)
    path = mp.save(measured, signature(spec, metric), home_dir())
    if as_json:
        click.echo(json.dumps(measured.to_dict()))
        return
    click.echo(describe(measured, alpha))
    click.echo(f"stored in {path}")


def describe(m: mp.Measured, alpha: float) -> str:
    p = m.parts
    lines = [
        f"fixed per run S  {p.fixed_s:8.2f} s      "
        f"(95% CI {m.fixed_ci[0]:.2f}–{m.fixed_ci[1]:.2f})",
        f"per task c       {p.task_s * 1e6:8.1f} µs     "
        f"(95% CI {m.task_ci[0] * 1e6:.1f}–{m.task_ci[1] * 1e6:.1f})",
        f"between runs σ_b {math.sqrt(p.var_between):8.2%}       "
        f"(95% CI {_sd(m.between_ci[0]):.2%}–{_sd(m.between_ci[1]):.2%})",
        f"within, per task σ_w {math.sqrt(p.var_within):6.2f}       "
        f"(95% CI {_sd(m.within_ci[0]):.2f}–{_sd(m.within_ci[1]):.2f})",
        f"best window n* ≈ {p.n_star():,.0f} tasks; plans at alpha {alpha}:",
    ]
    for target in (0.02, 0.03, 0.05, 0.1):
        lines.append(f"  ±{target:.0%}: {pp.plan(p, target, pp.planned_level(alpha)).line()}")
    return "\n".join(lines)


def _sd(var: float) -> float:
    return math.sqrt(var) if var >= 0 else math.nan
