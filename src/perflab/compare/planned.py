"""``compare --precision``: plan the window and the runs from the stored variance parts, print
the plan, then measure until the interval meets the target (``precision.run_planned``)."""

from __future__ import annotations

import dataclasses
import math
import re
import time
from collections.abc import Callable
from typing import Any

from perflab.compare import busy, command_parts, refine
from perflab.compare import parts as mp
from perflab.compare import precision as pp
from perflab.compare.calibrate import signature
from perflab.compare.gate import Comparison, Side, metric_value, same_spec
from perflab.compare.plan_range import ends, ranged
from perflab.errors import PerflabError
from perflab.files import perflab_home
from perflab.run.measure import measure
from perflab.spec import RunSpec

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


def precise_compare(
    a: Side, b: Side, metric: str, target: float, max_time_s: float, o: dict[str, Any]
) -> Comparison:
    """``compare --precision``: plan from the stored parts, print the plan, then measure
    until the interval meets the target (see ``precision.run_planned``). A plan longer than
    ``max_time_s`` is bad input: nothing runs. ``o["parts_of"]`` (optional): the spec whose
    stored parts plan it, when A's spec was made ready from it (bisect's releases, commits)."""
    alpha, threshold = o["alpha"], o["threshold"]
    # a command's parts are kept under its environment too (``command_parts``)
    key_of = command_parts.command_signature if a.spec.command is not None else signature
    sig = key_of(o.get("parts_of") or a.spec, metric)
    if o.get("update_parts"):
        _may_pool(sig, signature(b.spec, metric))
    # a command's pilot runs the command as it runs in the comparison (A itself, prepared);
    # its parts are stored under the spec they plan (bisect's base)
    found, pl = plan_or_refuse(Side(a.label, o.get("parts_of") or a.spec), metric, target,
                               max_time_s, alpha, say=o.get("say"), pilot_on=a)  # fmt: skip
    if o.get("update_parts"):
        refine.observations_of(found)  # parts that cannot pool are refused before any run
    for side in (a, b):
        if not found.whole_run:  # a command's run is its whole window: nothing to size
            side.resize(pl.tasks, None)
        side.ready()  # once per comparison (a no-op when the verb made it ready)
    run_s = found.parts.run_s(pl.tasks)
    pl, levels, k_max = sequence(found, pl, max_time_s, alpha, o["min_runs"])
    if o.get("say"):
        o["say"](f"plan: {pl.line()}")
    cmp = Comparison(a, b, metric, None, [], o["min_runs"], k_max, f"precision ±{target:.1%}",
                     same_spec(a.spec, b.spec), alpha)  # fmt: skip
    t0 = time.monotonic()

    def on_look(dec: Any, hw: float) -> None:
        cmp.decision = dec
        cmp.looks.append({"n": dec.n_a, **dec.to_dict(), "half_width": hw})
        if o.get("say"):
            spent = pp.duration(time.monotonic() - t0)
            o["say"](f"[dim]look at {dec.n_a} + {dec.n_b} runs: ×{dec.ratio:.3f}, "
                     f"CI ±{pp.pct(hw)}, {dec.verdict} ({spent})[/dim]")  # fmt: skip

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
    _say_load(cmp, target, max_time_s, hw, stopped)
    if o.get("update_parts"):
        _update(cmp, found, sig, pl.tasks, o.get("say"))
    return cmp


def sequence(
    found: mp.Measured, pl: pp.Plan, max_time_s: float, alpha: float, min_runs: int
) -> tuple[pp.Plan, dict[int, float], int]:
    """A planned comparison's looks (pairs → level), its most pairs, and ``pl`` with what
    that sequence is expected to spend and reach, and its range: the plan ``compare
    --precision`` prints (``perflab precision --command`` prints the same)."""
    run_s = found.parts.run_s(pl.tasks)
    if found.whole_run:  # a command: undecided, it goes on until the time budget
        # the budget stops it (out_of_time); the looks allow runs twice as fast as the pilot's
        k_max = busy.pairs_within(max_time_s, run_s / 2, pl.pairs)
        levels = busy.long_looks(min_runs, pl.pairs, k_max, alpha)
    else:
        k_max = max(pl.pairs, min(pp.most_pairs(pl.pairs), int(max_time_s // (2 * run_s))))
        levels = pp.precision_looks(min_runs, pl.pairs, k_max, alpha)
    pl = pp.expect(pl, found.parts, list(levels), max(2, pl.pairs // 2))
    pl = ranged(pl, ends(found, 1.0, pl.tasks), list(levels), max(2, pl.pairs // 2))
    return pl, levels, k_max


def _say_load(cmp: Comparison, target: float, max_time_s: float, hw: float, stopped: str) -> None:
    """The load the runs saw, in the result; and, where the target was not reached in the
    time or runs there were, that this node is too noisy for it (with the CV and load)."""
    assert cmp.precision is not None
    load = busy.load_of([*cmp.a.records, *cmp.b.records])
    cv = command_parts.cv_of(cmp.a.values, cmp.b.values)
    cmp.precision["load"] = load
    cmp.precision["cv"] = cv if math.isfinite(cv) else None
    robust = cmp.robust()
    cmp.notes.extend([robust.line()] if robust else [])
    cmp.notes.append(f"measured at {busy.load_text(load)}")
    if stopped in ("time budget", "most runs") and not hw <= target:
        line = busy.too_noisy(target, max_time_s, cv, load)
        cmp.precision["too_noisy"] = line
        cmp.notes.append(line)


def _may_pool(sig_a: dict[str, Any], sig_b: dict[str, Any]) -> None:
    """Bad input (before any run) when B is another benchmark than A: its runs would mix
    into A's parts (another target, workload, metric or machine)."""
    differ = refine.same_benchmark(sig_a, sig_b)
    if differ:
        raise PerflabError(f"--update-parts pools the comparison into A's parts, but B differs "
                           f"from A in {', '.join(differ)}")  # fmt: skip


def _update(
    cmp: Comparison,
    found: mp.Measured,
    sig: dict[str, Any],
    tasks: int,
    say: Callable[[str], None] | None,
) -> None:
    """Pool the comparison's pairs into the stored parts (``compare.refine``) and store them;
    nothing stored when a run failed."""
    assert cmp.precision is not None
    if cmp.failed is not None or min(len(cmp.a.values), len(cmp.b.values)) < 2:
        line = "parts not updated: " + ("a run failed" if cmp.failed else "under 2 pairs")
        cmp.precision["parts_update"] = {"line": line}
    else:
        walls = [_wall(r) for r in (*cmp.a.records, *cmp.b.records)]
        new = refine.from_comparison(cmp.a.values, cmp.b.values, walls, tasks)
        pooled = refine.pool(found, new)
        summary = refine.update_summary(found, pooled, new)
        path = mp.save(pooled, sig, perflab_home())
        line = f"{summary['line']}; stored in {path}"
        cmp.precision["parts_update"] = {**summary, "line": line}
    cmp.notes.append(line)
    if say:
        say(line)


def _wall(rec: Any) -> float:
    """A run's whole wall time (its phases' total, as the pilots'), nan without phases."""
    total = ((rec.measurement or {}).get("phases") or {}).get("total")
    return float(total) if total else math.nan


def plan_or_refuse(
    a: Side,
    metric: str,
    target: float,
    max_time_s: float,
    alpha: float,
    units: int = 2,
    scale: float = 1.0,
    level: float | None = None,
    say: Callable[[str], None] | None = None,
    pilot_on: Side | None = None,
) -> tuple[mp.Measured, pp.Plan]:
    """The stored parts and the plan; bad input (exit 2, nothing run) without parts or when
    the plan takes longer than ``max_time_s``. Every verb's ``--precision`` plans here: a
    step of the plan is ``units`` runs (2: A and B; a history's releases, a design's sets)
    whose estimate has ``scale`` times the variance of a pair's log ratio (a design's
    effect from one run of each set: ``reach.design_scale``). The interval is at ``level``:
    by default the planned look's of a sequential comparison (``planned_level``); a verb that
    makes all its runs plans at its alpha. A command's parts are its stored ones, else an
    A/A pilot of it is run (and stored) first (``command_parts``; ``say`` hears it)."""
    found = (_command_parts(a.spec, pilot_on or a, metric, say) if a.spec.command is not None
             else mp.load(signature(a.spec, metric), perflab_home()))  # fmt: skip
    if found is None:
        raise PerflabError(
            f"no measured variance parts for this benchmark and {metric}: "
            "run `perflab precision` with the same options first"
        )
    return found, plan_from(found, target, max_time_s, alpha, units, scale, level)


def plan_from(
    found: mp.Measured,
    target: float,
    max_time_s: float,
    alpha: float,
    units: int = 2,
    scale: float = 1.0,
    level: float | None = None,
) -> pp.Plan:
    """The plan for ±``target`` from parts ``found`` (see ``plan_or_refuse``); bad input
    when it takes longer than ``max_time_s``, naming the time it would take."""
    p = found.parts
    p = dataclasses.replace(p, var_between=p.var_between * scale, var_within=p.var_within * scale)
    pl = pp.plan(p, target, pp.planned_level(alpha) if level is None else level, found.bounds())
    pl = dataclasses.replace(pl, wall_s=pl.wall_s * units / 2, units=units,
                             whole_run=found.whole_run)  # fmt: skip
    pl = ranged(pl, ends(found, scale, pl.tasks))
    if pl.wall_s > max_time_s:
        raise PerflabError(
            f"±{pp.pct(target)} would take ~{pp.duration(pl.wall_s)} here ({pl.line()}), "
            f"more than --max-time {pp.duration(max_time_s)}"
        )
    return pl


def reached(pl: pp.Plan, hw: float, wall_s: float, stopped: str) -> dict[str, Any]:
    """What a planned comparison reached against its plan: "precision per hour"."""
    per_hour = pp.per_hour(hw, wall_s)
    line = (
        f"{stopped}: CI ±{pp.pct(hw)} reached (planned ±{pp.pct(pl.width)}, target "
        f"±{pp.pct(pl.target)}) in {pp.duration(wall_s)} (planned ~{pp.duration(pl.wall)}); "
        f"{pp.per_hour_text(per_hour)}"
    )
    return {
        "plan": pl.to_dict(),
        "target": pl.target,
        "half_width": hw if math.isfinite(hw) else None,
        "planned_half_width": pl.width,
        "wall_s": wall_s,
        "planned_wall_s": pl.wall,
        "stopped": stopped,
        "half_width_per_hour": per_hour,
        "line": line,
    }


def _command_parts(
    key: RunSpec, a: Side, metric: str, say: Callable[[str], None] | None
) -> mp.Measured:
    """A command's parts stored for ``key``, else those of an A/A pilot of side ``a``
    (stored under ``key`` for next time)."""
    found = command_parts.load(key, metric, perflab_home())
    if found is not None:
        return found
    if say:
        say(f"no stored parts for this command: an A/A pilot of {command_parts.PILOT_PAIRS} "
            "pairs of fresh runs first")  # fmt: skip
    found, path, _ = pilot_command(key, a, metric, say)
    if say:
        say(f"pilot: one run ~{pp.duration(found.parts.fixed_s)}, CV "
            f"{math.expm1(math.sqrt(found.parts.var_between)):.1%}; stored in {path}")  # fmt: skip
    return found


def pilot_command(
    key: RunSpec,
    a: Side,
    metric: str,
    say: Callable[[str], None] | None = None,
    pairs: int = command_parts.PILOT_PAIRS,
) -> tuple[mp.Measured, Any, list[Any]]:
    """An A/A pilot of ``pairs`` pairs of fresh runs of side ``a`` (a command), its parts
    stored under ``key``: the parts, the file's path and the kept runs' records. A run that
    fails or gives no value of ``metric`` ends it (bad input: nothing is stored)."""
    records: list[Any] = []

    def run() -> tuple[float, float]:
        t0 = time.monotonic()
        rec = measure(a.ready())
        wall = time.monotonic() - t0
        value = metric_value(rec, metric) if rec.status == "ok" else None
        if value is None or not value > 0 or not math.isfinite(value):
            why = rec.error or f"no value of {metric}"
            raise PerflabError(f"the command's pilot run {rec.run_id} {rec.status}: {why}")
        records.append(rec)
        return value, wall

    found = command_parts.pilot(run, pairs, say=say)
    path = command_parts.save(found, key, metric, perflab_home())
    return found, path, records[1:]  # the first is the run not kept


class _Failed(Exception):
    def __init__(self, record: Any) -> None:
        super().__init__(record.error)
        self.record = record


def _runner(side: Side, metric: str) -> Callable[[], float]:
    def run() -> float:
        rec = measure(side.ready())
        side.records.append(rec)
        value = metric_value(rec, metric) if rec.status == "ok" else None
        if value is None or not value > 0 or not math.isfinite(value):
            if rec.status == "ok":
                rec = dataclasses.replace(rec, error=f"run {rec.run_id}: no value of {metric}")
            raise _Failed(rec)
        side.values.append(value)
        return value

    return run
