"""``perflab precision``: this machine's noise for a benchmark, the one verb for it (issue
51). By default it measures the benchmark's variance parts and stores them, for
``compare --precision`` (compare/planned.py); with ``--gate`` it replays the compare gate on
A/A runs and stores the runs per side ``compare`` uses (what ``perflab calibrate`` did; that
name stays for one release, saying so once on stderr). A command's parts come from an A/A
pilot of whole runs (``compare.command_parts``), stored where ``compare --precision`` looks."""

from __future__ import annotations

import dataclasses
import json
import math
import sys
from pathlib import Path
from typing import Any

import click

from perflab.cli.app import json_option, main, progress
from perflab.cli.compare import decision_options, fresh_runs, gate_metric
from perflab.cli.precise import given, max_time_option, precision_option
from perflab.cli.spec_options import base_spec, run_options
from perflab.compare import calibrate as cal
from perflab.compare import parts as mp
from perflab.compare import pilot
from perflab.compare import precision as pp
from perflab.compare.calibrate import signature
from perflab.compare.gate import metric_value
from perflab.compare.plan_range import ends, ranged
from perflab.errors import PerflabError
from perflab.files import home_dir
from perflab.prepare import prepare
from perflab.run.measure import measure, validate
from perflab.spec import RunSpec

#: ``--runs``' default: A/A runs of the parts (or pairs per window), and of ``--gate``.
RUNS, GATE_RUNS = 8, 20

_NOISE_OPTIONS = [
    run_options,
    decision_options,
    click.option(
        "--gate",
        is_flag=True,
        help="Replay the compare gate on --runs A/A runs (default 20) and store the runs per "
        "side `compare` uses for this benchmark, with their false-alarm and detection rates "
        "(was `perflab calibrate`; a command target too).",
    ),
    click.option("--treat", "treat_set", default="", metavar="A,B=LEVEL", help="Treatment set."),
    click.option(
        "--runs",
        type=int,
        help=f"Fresh runs (A/A; default {RUNS}, with --gate {GATE_RUNS}); with --windows, A/A "
        "pairs per window.",
    ),
    click.option(
        "--splits",
        type=int,
        default=8,
        show_default=True,
        help="Sub-batches each run's counted window is split into (for the within-run noise).",
    ),
    click.option(
        "--windows",
        help="Pilot windows, e.g. 500,8000: --runs A/A pairs at each (interleaved), and the "
        "parts fitted as var = σ_b² + σ_w²/n, which sees noise at every time scale "
        "(recommended).",
    ),
    click.option(
        "--effect",
        type=float,
        help="With --gate: the change the recommended n must detect with 80 % power "
        "(default: twice the threshold).",
    ),
    click.option(
        "--simulations",
        type=int,
        default=200,
        show_default=True,
        help="With --gate: simulated A/A comparisons replayed on the measured runs.",
    ),
    precision_option(
        "that the plan is shown for (e.g. 3%): the plan `compare --precision` would make "
        "from the parts just measured"
    ),
    max_time_option,
    json_option,
]


def noise_options(f: Any) -> Any:
    """Every option of ``precision`` (and of its old name ``calibrate``)."""
    for opt in reversed(_NOISE_OPTIONS):
        f = opt(f)
    return f


@main.command()
@noise_options
def precision(gate: bool, **o: Any) -> None:
    """Measure this machine's noise for a benchmark and store it: by default its variance
    parts, for `compare --precision`; with --gate, the runs per side `compare` uses, from
    the compare gate replayed on identical (A/A) runs.

    The parts are the fixed seconds per run S, seconds per task c, the between-run and the
    within-window variance (with 95 % intervals): with --windows 500,8000 fitted from A/A
    pairs at each window (recommended); else from --runs runs of one window (--tasks,
    default 2,000) split into --splits sub-batches. --gate prints the gate's false-alarm
    and detection rates on the runs. (`run --runs K` prints K runs' median and CV.)

    A --command has no window (its run is its whole window): its parts are an A/A pilot of
    --runs pairs (default 8) of fresh runs, one run's time and CV with 95 % intervals,
    stored per command and environment where `compare --precision` (and every verb's
    --precision) finds them; the plans are runs of the whole command. --precision PCT adds
    the plan for PCT, as `compare --precision` would make it within --max-time."""
    mode, other = (("--gate", ("windows", "splits", "precision_target", "max_time")) if gate
                   else ("the parts (no --gate)", ("effect", "simulations")))  # fmt: skip
    if wrong := given(*other):
        raise PerflabError(f"{', '.join(wrong)} does not apply to {mode}")
    if o["precision_target"] is not None:
        _target(o["precision_target"])  # bad input before any run
    if o["max_time"] is not None and not o["max_time"] > 0:
        raise PerflabError(f"--max-time must be more than 0 seconds (got {o['max_time']:g})")
    if gate:
        _gate(o)
    elif o["command"] is not None:
        _command(o)
    else:
        _parts(o)


@main.command("calibrate", hidden=True)
@noise_options
def calibrate(gate: bool, **o: Any) -> None:
    """The old name of `perflab precision --gate` (kept for one release)."""
    if wrong := given("windows", "splits", "precision_target", "max_time"):
        raise PerflabError(f"{', '.join(wrong)} does not apply to --gate")
    click.echo("perflab: `calibrate` is now `perflab precision --gate`; the old name goes "
               "in the next release", err=True)  # fmt: skip
    _gate(o)


def _spec(o: dict[str, Any]) -> tuple[RunSpec, str]:
    """The benchmark (treated with --treat) and the metric its noise is measured on."""
    from perflab.factors.catalog import load_catalogs
    from perflab.factors.treat import treat

    metric = gate_metric(o)
    spec = base_spec(o)
    if o["treat_set"] or o["catalogs"]:
        spec = treat(spec, o["treat_set"], load_catalogs(list(o["catalogs"])))
    return spec, metric


def _parts(o: dict[str, Any]) -> None:
    """The variance parts, stored for ``compare --precision``."""
    spec, metric = _spec(o)
    runs = RUNS if o["runs"] is None else o["runs"]
    if o["windows"] is not None:
        measured, spec = _pilots(spec, _windows(o["windows"]), runs, metric)
    else:
        measured, spec = _splits(spec, o["splits"], runs, metric)
    path = mp.save(measured, signature(spec, metric), home_dir())
    if o["as_json"]:
        click.echo(json.dumps(measured.to_dict()))
        return
    click.echo(describe(measured, o["alpha"]))
    if o["precision_target"] is not None:
        click.echo(f"  {_asked(measured, o)}")
    click.echo(f"stored in {path}")


def _command(o: dict[str, Any]) -> None:
    """A command's parts: an A/A pilot of it in fresh processes (``command_parts``), stored
    per command and environment where ``compare --precision`` finds them (so its plan needs
    no pilot); what it measured, where it is stored, and the plans it makes."""
    from perflab.compare import busy, command_parts
    from perflab.compare.gate import Side
    from perflab.compare.planned import pilot_command

    if wrong := given("windows", "splits"):
        why = "its run is its whole window: the pilot is --runs A/A pairs of whole runs"
        raise PerflabError(f"{', '.join(wrong)} does not apply to a command ({why})")
    spec, metric = _spec(o)
    pairs = command_parts.PILOT_PAIRS if o["runs"] is None else o["runs"]
    if pairs < 2:
        raise PerflabError(f"--runs (A/A pairs of the command) must be at least 2 (got {pairs})")
    validate(spec)
    side = Side("A", spec)
    side.ready()  # as compare makes its side A ready: the parts are stored under that spec
    found, path, records = pilot_command(side.spec, side, metric, _progress, pairs)
    load = busy.load_of(records)
    plans = {f"{t:g}": _plan_line(found, t, o, sequence=False) for t in _TARGETS}
    asked = None if o["precision_target"] is None else _asked(found, o)
    if o["as_json"]:
        cv, cv_ci = _cv(found)
        click.echo(json.dumps({**found.to_dict(), "metric": metric, "cv": cv, "cv_ci": cv_ci,
                               "run_s": found.parts.fixed_s, "run_s_ci": found.fixed_ci,
                               "load": load, "stored": str(path), "plans": plans,
                               "plan": asked}))  # fmt: skip
        return
    click.echo(describe_command(found, metric, load))
    click.echo(f"plans at alpha {o['alpha']} (the planned look's, as `compare --precision` "
               "plans them):")  # fmt: skip
    for t in _TARGETS:
        click.echo(f"  ±{t:.0%}: {plans[f'{t:g}']}")
    if asked is not None:
        click.echo(f"  {asked}")
    click.echo(f"stored in {path} (this command in this environment: `compare --precision` "
               "on it needs no pilot)")  # fmt: skip


#: The targets ``precision`` shows a plan for (besides ``--precision``'s).
_TARGETS = (0.02, 0.03, 0.05, 0.1)


def _target(text: str) -> float:
    """``--precision``'s target as a fraction (bad input naming the option)."""
    from perflab.compare.planned import parse_target

    return parse_target(text)


def _progress(text: str) -> None:
    from perflab.cli.app import err_console

    err_console.print(text, soft_wrap=True)


def _plan_line(found: mp.Measured, target: float, o: dict[str, Any], sequence: bool = True) -> str:
    """The plan ``compare --precision`` makes from ``found`` for ±``target`` (with
    ``sequence``, what its looks are expected to spend and reach: seconds of simulation, so
    only for ``--precision``'s own), or the sentence of its refusal beyond ``--max-time``."""
    from perflab.compare import planned as pc
    from perflab.compare.gate import DEFAULT_MIN_RUNS

    limit = pc.DEFAULT_MAX_TIME_S if o["max_time"] is None else o["max_time"]
    pl = pc.plan_from(found, target, math.inf, o["alpha"])
    if pl.wall_s > limit:
        return f"{pl.line()}: more than --max-time {pp.duration(limit)}, `compare` refuses it"
    if not sequence:
        return pl.line()
    return pc.sequence(found, pl, limit, o["alpha"], DEFAULT_MIN_RUNS)[0].line()


def _asked(found: mp.Measured, o: dict[str, Any]) -> str:
    """The line of ``--precision``'s own target."""
    target = _target(o["precision_target"])
    return f"±{pp.pct(target)} (--precision): {_plan_line(found, target, o)}"


def _cv(found: mp.Measured) -> tuple[float, tuple[float, float]]:
    """One run's coefficient of variation and its 95 % interval (from σ_b²'s)."""
    lo, hi = found.between_ci
    return (math.expm1(math.sqrt(found.parts.var_between)),
            (math.expm1(math.sqrt(max(lo, 0.0))), math.expm1(math.sqrt(max(hi, 0.0)))))  # fmt: skip


def describe_command(found: mp.Measured, metric: str, load: dict[str, float] | None) -> str:
    """What a command's pilot measured: one run's time and its CV, with 95 % intervals."""
    from perflab.compare.busy import load_text

    cv, (lo, hi) = _cv(found)
    run_lo, run_hi = found.fixed_ci
    return "\n".join([
        f"pilot: {found.runs // 2} A/A pairs of fresh runs of the whole command ({metric})",
        f"one run          {_secs(found.parts.fixed_s):>8}   "
        f"(95% CI {_secs(run_lo)}–{_secs(run_hi)})",
        f"CV of one run    {cv:8.2%}   (95% CI {lo:.2%}–{hi:.2%})",
        f"measured at {load_text(load)}",
    ])  # fmt: skip


def _secs(x: float) -> str:
    """A run's time: '0.132 s' (three figures under a minute), else as ``duration`` says."""
    return f"{x:.3g} s" if x < 60 else pp.duration(x)


def _gate(o: dict[str, Any]) -> None:
    """A/A runs replayed through the compare gate; the runs per side stored for compare."""
    spec, metric = _spec(o)
    runs = GATE_RUNS if o["runs"] is None else o["runs"]
    validate(spec)
    if runs < cal.MIN_CALIBRATION_RUNS:
        raise PerflabError(f"--runs must be at least {cal.MIN_CALIBRATION_RUNS}")
    if o["simulations"] < 10:
        raise PerflabError("--simulations must be at least 10")
    prepared = prepare(spec)  # once, for every run
    values = fresh_runs(prepared, runs, lambda rec: metric_value(rec, metric))
    result = cal.calibrate_values(
        signature(prepared.spec, metric), values, o["threshold"], o["alpha"], o["effect"],
        sims=o["simulations"],
    )  # fmt: skip
    path = cal.save(result, home_dir())
    if o["as_json"]:
        click.echo(json.dumps(result.to_dict()))
        return
    from perflab.compare.render import print_calibration

    print_calibration(result, Path(path))


def _windows(text: str) -> list[int]:
    try:
        got = sorted({int(x.replace("_", "")) for x in text.split(",") if x.strip()})
    except ValueError:
        got = []
    if len(got) < 2 or got[0] < 1:
        raise PerflabError(f"--windows: {text!r} is not two or more window sizes such as 500,8000")
    return got


def _pilots(
    spec: RunSpec, windows: list[int], pairs: int, metric: str
) -> tuple[mp.Measured, RunSpec]:
    """A/A pairs at each window, interleaved, fitted by ``compare.pilot.estimate``."""
    if pairs < pilot.MIN_PAIRS:
        raise PerflabError(f"--runs (A/A pairs per window) must be at least {pilot.MIN_PAIRS}")
    sized = [dataclasses.replace(spec, tasks=n, time_s=None) for n in windows]
    for one in sized:
        validate(one)
    ready = [prepare(one) for one in sized]  # once per window, for every pair
    got: list[pilot.PilotRun] = []
    for i in range(pairs):
        for n, ready_n in zip(windows, ready, strict=True):
            for _ in range(2):
                progress(f"pair {i + 1}/{pairs} of {n:,} tasks")
                rec = measure(ready_n)
                value = metric_value(rec, metric) if rec.status == "ok" else None
                ph = rec.measurement.get("phases") or {}
                if value is None or not ph.get("total"):
                    click.echo(f"perflab: run {rec.run_id} {rec.status}: {rec.error}", err=True)
                    sys.exit(1)
                got.append(pilot.PilotRun(n, float(value), float(ph["total"])))
    return mp.from_pilot(pilot.estimate(got), len(got)), ready[-1].spec


def _splits(spec: RunSpec, splits: int, runs: int, metric: str) -> tuple[mp.Measured, RunSpec]:
    """Fresh runs of one window split into sub-batches (``parts.estimate``)."""
    if splits < 2 or runs < mp.MIN_RUNS:
        raise PerflabError(f"--splits must be at least 2 and --runs at least {mp.MIN_RUNS}")
    mp.splittable(metric)
    tasks = spec.tasks or 2000
    spec = dataclasses.replace(spec, tasks=tasks, time_s=None, window_splits=splits)
    validate(spec)
    prepared = prepare(spec)  # once, for every run
    got = fresh_runs(prepared, runs, lambda rec: mp.from_record(rec.to_dict(), metric))
    return mp.estimate(got), prepared.spec


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
    if m.windows:
        lines[-1] = (
            f"fitted from A/A pairs at {', '.join(f'{w:,}' for w in m.windows)} tasks; "
            f"best window n* ≈ {p.n_star():,.0f}, picked {m.window or 0:,} tasks; "
            f"plans at alpha {alpha}:"
        )
    for target in (0.02, 0.03, 0.05, 0.1):
        pl = pp.plan(p, target, pp.planned_level(alpha), m.bounds())
        pl = ranged(pl, ends(m, 1.0, pl.tasks))
        lines.append(f"  ±{target:.0%}: {pl.line()}")
    return "\n".join(lines)


def _sd(var: float) -> float:
    return math.sqrt(var) if var >= 0 else math.nan
