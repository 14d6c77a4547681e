"""Comparisons on a busy node: what the load was, looks that go on until ``--max-time``, and
the sentence that says the node is too noisy for the target.

A shared node's load changes over minutes. The runs are interleaved in ABBA blocks (a change
of load falls within a pair, not between the sides), each run records the node's load
(``run.envinfo.load_now``), and an undecided planned comparison of a command goes on, at
looks ~15 % apart just past the plan and then about 1.5× apart, until its time budget
instead of stopping at a fixed number of runs (as does the plain gate with ``--max-time``,
past its ``--runs``).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

import numpy as np

from perflab.analysis.sizing import duration as duration
from perflab.analysis.stats import split_level
from perflab.compare.stats import EARLY_SHARE, looks

#: Most pairs a command's planned comparison may run on to (the time budget stops it first).
MOST_PAIRS = 2000


def long_looks(n_min: int, k_plan: int, k_max: int, alpha: float) -> dict[int, float]:
    """Like ``precision.precision_looks``, but past the planned look only three looks ~15 %
    apart and then looks about 1.5× apart up to ``k_max`` (not every ABBA block): a comparison
    that may go on to hundreds of pairs keeps a usable share of alpha at each look. The levels
    add up to alpha."""
    k_max = max(k_plan, k_max)
    before = [k for k in looks(n_min, k_plan)[:-1] if 2 <= k < k_plan]
    # the plan's half-width is its expectation, so about half the comparisons need a little
    # more than planned: three looks ~15 % apart first keep that overshoot (and the time
    # spent past the plan) small; then ~1.5× apart
    near = [2 * math.ceil(k_plan * 1.15**i / 2) for i in (1, 2, 3)]
    after = [k for k in near if k_plan < k < k_max]
    after += [
        k for k in looks(after[-1] if after else k_plan, k_max) if k > max(after, default=k_plan)
    ]
    others = sorted(set(before + after))
    early, last = split_level(alpha, len(others), EARLY_SHARE)
    return dict(sorted({**{k: early for k in others}, k_plan: last}.items()))


def pairs_within(max_time_s: float, run_s: float, k_plan: int) -> int:
    """The most pairs of runs of ``run_s`` seconds that fit in ``max_time_s`` (at least the
    plan's, at most ``MOST_PAIRS``)."""
    if not run_s > 0:
        return max(k_plan, MOST_PAIRS)
    return max(k_plan, min(MOST_PAIRS, int(max_time_s // (2 * run_s))))


def load_of(records: Iterable[Any]) -> dict[str, float] | None:
    """The mean load over runs' records (``env["load"]``): the 1-min load average, the CPU
    pressure (some/full avg10, %) and steal (%), each where any run had it; None without."""
    keys = ("loadavg_1m", "cpu_some_avg10", "cpu_full_avg10", "steal_pct")
    got: dict[str, list[float]] = {k: [] for k in keys}
    for rec in records:
        load = (getattr(rec, "env", None) or {}).get("load") or {}
        for k in keys:
            v = load.get(k)
            if isinstance(v, int | float) and math.isfinite(v):
                got[k].append(float(v))
    out = {k: float(np.mean(v)) for k, v in got.items() if v}
    return out or None


def load_text(load: dict[str, float] | None) -> str:
    """'load 1.93 (1-min average), CPU pressure 41 % (some, avg10), steal 0.0 %'."""
    if not load:
        return "load not recorded"
    parts = []
    if "loadavg_1m" in load:
        parts.append(f"load {load['loadavg_1m']:.2f} (1-min average)")
    if "cpu_some_avg10" in load:
        parts.append(f"CPU pressure {load['cpu_some_avg10']:.0f} % (some, avg10)")
    if "steal_pct" in load:
        parts.append(f"steal {load['steal_pct']:.1f} %")
    return ", ".join(parts)


def too_noisy(target: float, max_time_s: float, cv: float, load: dict[str, float] | None) -> str:
    """The sentence of a comparison that ran out of time or runs before its target."""
    from perflab.compare.precision import pct

    at = load_text(load)
    cv_text = f"{cv:.1%}" if math.isfinite(cv) else "n/a"
    return (
        f"this node is too noisy for ±{pct(target)} within --max-time {duration(max_time_s)}: "
        f"measured CV {cv_text} at {at}"
    )


def cv_of(values_a: list[float], values_b: list[float]) -> float:
    """One run's coefficient of variation (as a fraction) from paired runs: the sd of the
    pairs' log ratios over √2 (a pair's difference has twice a run's variance); nan under
    2 pairs."""
    n = min(len(values_a), len(values_b))
    if n < 2:
        return math.nan
    d = np.log(np.asarray(values_b[:n], float)) - np.log(np.asarray(values_a[:n], float))
    return math.expm1(float(np.std(d, ddof=1)) / math.sqrt(2.0))
