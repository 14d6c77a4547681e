"""``perflab precision`` (measure a benchmark's variance parts) and ``compare --precision``
(plan the window and the runs from them, then measure until the interval meets the target)."""

from __future__ import annotations

import dataclasses
import json
import math
import re
import sys
import time
from collections.abc import Callable
from typing import Any

import click

from perflab.cli.app import err_console, json_option, main
from perflab.cli.compare import decision_options, gate_metric
from perflab.cli.spec_options import base_spec, run_options
from perflab.compare import parts as mp
from perflab.compare import precision as pp
from perflab.compare.calibrate import signature
from perflab.compare.gate import Comparison, Side, metric_value, same_spec
from perflab.errors import PerflabError
from perflab.files import home_dir, perflab_home
from perflab.prepare import prepare
from perflab.run.measure import measure, validate

#: Time budget of ``compare --precision`` without ``--max-time``.
DEFAULT_MAX_TIME_S = 3600.0


def parse_target(text: str) -> float:
    """'3%', '3 %' or '0.03' → 0.03."""
    m = re.fullmatch(r"\s*([0-9]*\.?[0-9]+)\s*(%?)\s*", text)
    if not m:
        raise PerflabError(f"--precision: {text!r} is not a percentage such as 3%")
    value = float(m.group(1)) / (100 if m.group(2) else 1)
    if not 0 < value < 1:
        raise PerflabError(f"--precision must be between 0 and 100 % (got {text})")
    return value


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
    spec = prepare(spec).spec
    got = []
    for i in range(runs):
        if not as_json:
            err_console.print(f"[dim]run {i + 1}/{runs} …[/dim]")
        rec = measure(spec)
        one = mp.from_record(rec.to_dict(), metric) if rec.status == "ok" else None
        if one is None:
            click.echo(f"perflab: run {rec.run_id} {rec.status}: {rec.error}", err=True)
            sys.exit(1)
        got.append(one)
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


def precise_compare(
    a: Side, b: Side, metric: str, target: float, max_time_s: float, o: dict[str, Any]
) -> Comparison:
    """``compare --precision``: plan from the stored parts, print the plan, then measure
    until the interval meets the target (see ``precision.run_planned``). A plan longer than
    ``max_time_s`` is bad input: nothing runs."""
    alpha, threshold = o["alpha"], o["threshold"]
    found, pl = plan_or_refuse(a, metric, target, max_time_s, alpha)
    if not o["as_json"]:
        err_console.print(f"plan: {pl.line()}")
    for side in (a, b):
        side.spec = dataclasses.replace(side.spec, tasks=pl.tasks, time_s=None)
    run_s = found.parts.run_s(pl.tasks)
    k_max = max(pl.pairs, min(pp.most_pairs(pl.pairs), int(max_time_s // (2 * run_s))))
    levels = pp.precision_looks(o["min_runs"], pl.pairs, k_max, alpha)
    cmp = Comparison(a, b, metric, None, [], o["min_runs"], k_max, f"precision ±{target:.1%}",
                     same_spec(a.spec, b.spec), alpha)  # fmt: skip
    t0 = time.monotonic()

    def on_look(dec: Any, hw: float) -> None:
        cmp.decision = dec
        cmp.looks.append({"n": dec.n_a, **dec.to_dict(), "half_width": hw})

    try:
        r = pp.run_planned(
            _runner(a, metric), _runner(b, metric), target, levels, pp.planned_level(alpha),
            threshold, metric == "tasks_per_s",
            out_of_time=lambda: time.monotonic() - t0 + 2 * run_s > max_time_s,
            precision_from=max(2, pl.pairs // 2), on_look=on_look,
        )  # fmt: skip
        stopped, hw = r.stopped, r.half_width
    except _Failed as stop:
        cmp.failed, stopped, hw = stop.record, "a run failed", math.inf
    cmp.elapsed_s = time.monotonic() - t0
    cmp.precision = reached(pl, hw, cmp.elapsed_s, stopped)
    cmp.notes.append(cmp.precision["line"])
    return cmp


def plan_or_refuse(
    a: Side, metric: str, target: float, max_time_s: float, alpha: float
) -> tuple[mp.Measured, pp.Plan]:
    """The stored parts and the plan; bad input (exit 2, nothing run) without parts or when
    the plan takes longer than ``max_time_s``."""
    found = mp.load(signature(a.spec, metric), perflab_home())
    if found is None:
        raise PerflabError(
            f"no measured variance parts for this benchmark and {metric}: "
            "run `perflab precision` with the same options first"
        )
    pl = pp.plan(found.parts, target, pp.planned_level(alpha))
    if pl.wall_s > max_time_s:
        raise PerflabError(
            f"±{pp.pct(target)} would take ~{pp.duration(pl.wall_s)} here ({pl.line()}), "
            f"more than --max-time {pp.duration(max_time_s)}"
        )
    return found, pl


def reached(pl: pp.Plan, hw: float, wall_s: float, stopped: str) -> dict[str, Any]:
    """What a planned comparison reached against its plan: "precision per hour"."""
    per_hour = hw * math.sqrt(wall_s / 3600) if math.isfinite(hw) else None
    line = (
        f"{stopped}: CI ±{pp.pct(hw)} reached (planned ±{pp.pct(pl.half_width)}, target "
        f"±{pp.pct(pl.target)}) in {pp.duration(wall_s)} (planned ~{pp.duration(pl.wall_s)})"
    )
    if per_hour is not None:
        line += f"; at this rate an hour gives ±{pp.pct(per_hour)}, 4× the time halves it"
    return {
        "plan": pl.to_dict(),
        "target": pl.target,
        "half_width": hw if math.isfinite(hw) else None,
        "planned_half_width": pl.half_width,
        "wall_s": wall_s,
        "planned_wall_s": pl.wall_s,
        "stopped": stopped,
        "half_width_per_hour": per_hour,
        "line": line,
    }


class _Failed(Exception):
    def __init__(self, record: Any) -> None:
        super().__init__(record.error)
        self.record = record


def _runner(side: Side, metric: str) -> Callable[[], float]:
    def run() -> float:
        rec = measure(side.spec)
        side.records.append(rec)
        value = metric_value(rec, metric) if rec.status == "ok" else None
        if value is None or not value > 0 or not math.isfinite(value):
            if rec.status == "ok":
                rec = dataclasses.replace(rec, error=f"run {rec.run_id}: no value of {metric}")
            raise _Failed(rec)
        side.values.append(value)
        return value

    return run
