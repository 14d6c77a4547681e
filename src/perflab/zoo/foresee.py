"""``zoo --precision``, before anything runs: what the target will cost, as far as it is known
without a run, so that a target out of reach is refused before the pilot (issue 40: "one line
naming the time it would take, exit 2, nothing run").

A zoo is its own pilot (``zoo.precise``), but some of what its plan needs is stored already:

- **stored parts** (``perflab precision``) or a **stored calibration** (``perflab
  calibrate``) of a row's own signature (target, workload, parameters, interpreter,
  packages, host; the parts without the window's size, a calibration with it) give the
  variance of its runs' log wall time (``wall_s``, ``us_per_task`` or ``tasks_per_s``: at a
  fixed number of tasks their logs differ by a constant), hence its runs to ±target;
- without them a row needs at least ``FIRST_LOOK`` runs (a spread of zero), so only a pilot
  shorter than that implies more runs;
- a run's seconds are the parts' S + c·n where the row's parts are stored; else at least the
  row's ideal time (its work spread over the slots: no engine runs it faster) plus the
  lowest fixed cost S stored for the target on this host (the lower end of its interval).

The sum over the rows after the pilot is the plan when every row's variance is stored, a
lower bound otherwise (the METG search only adds rows). Past ``--max-time`` it is refused
before the zoo is stored. Otherwise one line says what is known: the plan, or that the pilot
runs first and how long its runs are capped at (``--timeout`` each).
"""

from __future__ import annotations

import math
import socket
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from perflab.analysis.sizing import duration, pairs_needed
from perflab.errors import PerflabError
from perflab.spec import RunSpec
from perflab.zoo.precise import FIRST_LOOK, LEVEL

#: Metrics whose log variance at a fixed number of tasks is that of the log wall time.
SAME_LOG_VARIANCE = ("wall_s", "us_per_task", "tasks_per_s")
#: An engine measured at a shade over its ideal (the kernel's calibration is itself measured)
#: must not make the bound refuse a target it could reach.
IDEAL_SHARE = 0.9


@dataclass
class Prior:
    """What is known of one row before it runs: its runs' log variance (None: unknown), where
    that comes from, and one run's seconds (a lower bound unless ``var`` is from parts)."""

    var: float | None
    source: str
    run_s: float
    #: The variance at the ends of the stored parts' 95 % intervals (``plan_range.ends``).
    var_range: tuple[float, float] | None = None


def prior(spec: RunSpec, slots: int, home: Path) -> Prior:
    """The row's stored variance and the seconds of one of its runs (see the module)."""
    from perflab.compare import calibrate as cal
    from perflab.compare import parts as mp
    from perflab.compare.plan_range import ends

    for metric in SAME_LOG_VARIANCE:
        sig = cal.signature(spec, metric)
        found = mp.load(sig, home)
        if found is not None:
            n = float(spec.tasks or 0)
            at = ends(found, 1.0, int(n)) if n > 0 else None
            var_range = (at[0].var_run(n), at[1].var_run(n)) if at else None
            return Prior(found.parts.var_run(n), "stored parts", found.parts.run_s(n), var_range)
        c = cal.load(sig, home)
        if c is not None and c.sigma_log > 0:
            return Prior(c.sigma_log**2, "a stored calibration", least_run_s(spec, slots, home))
    return Prior(None, "", least_run_s(spec, slots, home))


def least_run_s(spec: RunSpec, slots: int, home: Path) -> float:
    """A lower bound of one run's seconds known without running it: its ideal time plus the
    least start-up cost stored for its target on this host (0 when none is)."""
    p = spec.params
    if "task_us" in p:
        work = float(spec.tasks or 0) * float(p["task_us"]) / 1e6
    elif spec.workload == "wfcommons":  # the trace's runtimes scaled to a mean of task_ms
        work = float(p.get("size", 0)) * float(p.get("task_ms", 0.0)) / 1e3
    else:
        work = 0.0
    return IDEAL_SHARE * work / max(1, slots) + least_fixed_s(spec.target, home)


def least_fixed_s(target: str, home: Path) -> float:
    """The lowest fixed cost S (its interval's lower end) of any parts stored for ``target``
    on this host: the engine's start-up and teardown, whatever the workload."""
    from perflab.compare import parts as mp
    from perflab.files import read_keyed

    host, lows = socket.gethostname(), []
    for entry in read_keyed(mp.store_path(home), mp.STORE).values():
        sig = entry.get("signature") or {}
        if sig.get("target") == target and sig.get("host") == host:
            low = (entry.get("fixed_ci") or [math.nan])[0]
            lows.append(low if isinstance(low, int | float) and math.isfinite(low) else 0.0)
    return max(0.0, min(lows, default=0.0))


def before_pilot(
    items: list[dict[str, Any]],
    pilot: int,
    target: float,
    max_time_s: float,
    timeout_s: float,
    slots: int,
    home: Path,
    search_runs: int = 0,
) -> str:
    """The line to print before a fresh zoo's pilot of ``pilot`` runs of each of ``items``
    (``search_runs``: the most the METG search may add); bad input, nothing stored, when the
    runs after it would take longer than ``max_time_s`` (the plan, or a lower bound)."""
    from perflab.compare.precision import log_half, pct

    h = log_half(target)
    priors = [prior(_spec(it), slots, home) for it in items]
    more = [max(0, (pairs_needed(p.var, h, LEVEL, FIRST_LOOK) if p.var is not None
                    else FIRST_LOOK) - pilot) for p in priors]  # fmt: skip
    wall = sum(m * p.run_s for m, p in zip(more, priors, strict=True))
    known = sum(1 for p in priors if p.var is not None)
    sources = sorted({p.source for p in priors if p.var is not None})
    if known == 0:
        whence = (
            f"a lower bound: {FIRST_LOOK} runs of each measurement at least, each "
            "no shorter than its ideal time and its engine's least stored start-up"
        )
    else:
        whence = (f"planned from {' and '.join(sources)} of {known} of {len(items)} "
                  "measurements" + ("" if known == len(items) else ", a lower bound for the "
                                    "rest"))  # fmt: skip
    if wall > max_time_s:
        raise PerflabError(
            f"±{pct(target)} on every measurement would take ~{duration(wall)} more here "
            f"after the pilot ({sum(more):,} more runs; {whence}), more than --max-time "
            f"{duration(max_time_s)}"
        )
    runs = pilot * len(items) + search_runs
    cap = f"each capped at --timeout {duration(timeout_s)}: at most ~{duration(runs * timeout_s)}"
    if known == len(items):
        whence += _range(priors, pilot, h)
        return (f"before the pilot: ~{sum(more):,} more runs after it, ~{duration(wall)} "
                f"({whence}); the pilot ({runs} runs at most, {cap}) plans them again")  # fmt: skip
    bound = f", at least ~{duration(wall)} more ({whence})" if wall > 0 else ""
    return (f"the pilot runs first: {runs} runs at most ({pilot} of each of {len(items)} "
            f"measurements" + (", with the METG search's levels" if search_runs else "")
            + f"), {cap}; ±{pct(target)} is planned from its spread{bound}")  # fmt: skip


def _range(priors: list[Prior], pilot: int, h: float) -> str:
    """'; predicted 10–30 runs, ~2–5 min from the parts' 95% intervals' (empty without
    intervals): the runs after the pilot at the ends of each row's stored variance."""
    from perflab.compare.precision import span

    if not any(p.var_range for p in priors):
        return ""
    runs, walls = [], []
    for end in (0, 1):
        more = [max(0, pairs_needed(p.var_range[end] if p.var_range else p.var or 0.0, h,
                                    LEVEL, FIRST_LOOK) - pilot) for p in priors]  # fmt: skip
        runs.append(sum(more))
        walls.append(sum(m * p.run_s for m, p in zip(more, priors, strict=True)))
    return (
        f"; predicted {runs[0]:,}–{runs[1]:,} runs, ~{span(*walls)} from the parts' 95% intervals"
    )


def _spec(item: dict[str, Any]) -> RunSpec:
    return RunSpec.from_dict(item["spec"])
