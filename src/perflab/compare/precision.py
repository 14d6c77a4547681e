"""Precision per hour: size a paired comparison from measured variance parts, and plan it.

A run of window ``n`` tasks gives the log of its metric with variance σ_b² + σ_w²/n: σ_b² is
between runs (a fresh engine each time), σ_w² is within the window, per task (the variance of
the log of one task's share, so a window of n tasks averages it down by n). A run costs a fixed
S seconds (start-up, warm-up, teardown: everything but the counted window) plus c seconds per
task. A paired comparison of k pairs then has

    var(mean log ratio) = 2 (σ_b² + σ_w²/n) / k        wall = 2 k (S + c n)

For a fixed variance the cost is least at n* = sqrt(σ_w² S / (σ_b² c)); ``plan`` searches the
windows around it (round numbers between the bounds) with t quantiles for the runs each needs,
and keeps the cheapest. Everything here is pure (no runs, no files).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import asdict, dataclass, replace
from typing import Any

import numpy as np

from perflab.analysis.sizing import MIN_PAIRS, duration, half_width, pairs_needed, t_quantile
from perflab.analysis.stats import split_level
from perflab.compare.stats import EARLY_SHARE, Decision, abba, decide, looks

#: Round windows the planner tries (× powers of ten), besides its bounds and n*.
NICE = (1.0, 1.2, 1.5, 2.0, 2.5, 3.0, 4.0, 5.0, 6.0, 8.0)
#: Default bounds of the window a plan may pick (tasks per run).
WINDOW_BOUNDS = (100, 200_000)
#: A planned comparison whose parts were underestimated runs on to this many times its pairs.
OVERRUN = 1.5


@dataclass(frozen=True)
class Parts:
    """The variance parts and costs of one target/workload/metric on one machine."""

    fixed_s: float  # S: seconds per run outside the counted window
    task_s: float  # c: seconds per counted task
    var_between: float  # σ_b²: between-run variance of the log metric
    var_within: float  # σ_w²: within-window variance of the log metric, per task

    def var_run(self, n: float) -> float:
        """Variance of one run's log metric with a window of ``n`` tasks."""
        return self.var_between + self.var_within / n

    def run_s(self, n: float) -> float:
        return self.fixed_s + self.task_s * n

    def n_star(self) -> float:
        """The continuous optimum window (inf when σ_b² or c is 0, 0 when σ_w² or S is 0)."""
        if self.var_within <= 0 or self.fixed_s <= 0:
            return 0.0
        if self.var_between <= 0 or self.task_s <= 0:
            return math.inf
        return math.sqrt(self.var_within * self.fixed_s / (self.var_between * self.task_s))


@dataclass(frozen=True)
class Plan:
    """``pairs`` runs per side of ``tasks`` tasks, taking about ``wall_s``, for a CI of the
    ratio B/A of ±``half_width`` (relative) at ``confidence``, against ``target``."""

    tasks: int
    pairs: int
    wall_s: float
    half_width: float
    target: float
    confidence: float
    n_star: float
    #: What the sequence is expected to spend and reach with its looks and stopping rule
    #: (``expect``): the mean wall time and the median half-width at the stop. None: the
    #: planned look's own figures stand.
    expected_wall_s: float | None = None
    expected_half_width: float | None = None
    #: Runs per step of ``pairs``: 2 (A and B) for a comparison; a history's releases, a
    #: campaign's sets (``wall_s`` is then theirs).
    units: int = 2
    #: A prediction, not a guarantee: the pairs and the wall time (the sequence's when
    #: ``expect`` ran) at the ends of the stored parts' 95 % intervals (``plan_range``).
    pairs_range: tuple[int, int] | None = None
    wall_range_s: tuple[float, float] | None = None
    whole_run: bool = False  # a command's plan: each run is the whole command, no window

    @property
    def reachable(self) -> bool:
        return math.isfinite(self.wall_s)

    @property
    def wall(self) -> float:
        """The wall time to expect: the sequence's when known, else the planned look's."""
        return self.wall_s if self.expected_wall_s is None else self.expected_wall_s

    @property
    def width(self) -> float:
        """The half-width to expect: the sequence's when known, else the planned look's."""
        return self.half_width if self.expected_half_width is None else self.expected_half_width

    def line(self) -> str:
        runs = f"{self.pairs} + {self.pairs}" if self.units == 2 else f"{self.units} × {self.pairs}"
        k, w = self.pairs_range, self.wall_range_s
        within = f" (predicted {k[0]}–{k[1]} from the parts' 95% intervals)" if k else ""
        spread = f" ({span(w[0], w[1])})" if w else ""
        of = "of the whole command" if self.whole_run else f"of {self.tasks:,} tasks"
        return (
            f"{runs} runs{within} {of}, ~{duration(self.wall)}{spread}, "
            f"expected CI ±{pct(self.width)} ({self.confidence:.1%})"
        )

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["n_star"] = self.n_star if math.isfinite(self.n_star) else None
        return {**out, "line": self.line()}


def span(lo_s: float, hi_s: float) -> str:
    """'3–6 min' (one unit when both ends share it), else '50 s–2 min'; '4 min' alone when
    both ends round alike."""
    lo, hi = duration(lo_s), duration(hi_s)
    if lo == hi:
        return hi
    unit = hi.split(" ", 1)[-1]
    return f"{lo.split(' ', 1)[0]}–{hi}" if lo.endswith(" " + unit) else f"{lo}–{hi}"


def pct(x: float) -> str:
    if not math.isfinite(x):
        return "∞"
    if 0 < x < 0.001:
        return f"{x * 100:.2g}%"  # ±0.01 %, not ±0.0 %
    return f"{x:.1%}" if x < 0.1 else f"{x:.0%}"


#: Below this wall time no rate is quoted: a stand-in's runs take no time, and ±0.0 % an
#: hour would be a figure of the clock's resolution, not of the measurement.
MIN_RATE_WALL_S = 1.0


def per_hour(hw: float | None, wall_s: float) -> float | None:
    """The half-width one wall-hour would give at the rate reached: ``hw`` × sqrt(hours
    spent), as an interval narrows with the square root of its runs. None (n/a) when ``hw``
    is unknown or the wall time is about zero (under ``MIN_RATE_WALL_S``). Every verb's
    ``half_width_per_hour`` is this."""
    if hw is None or not math.isfinite(hw) or not wall_s >= MIN_RATE_WALL_S:
        return None
    return hw * math.sqrt(wall_s / 3600)


def per_hour_text(rate: float | None) -> str:
    """The line every verb says its ``half_width_per_hour`` with, and what more time buys."""
    if rate is None:
        return "at this rate an hour gives n/a (no wall time to measure a rate by)"
    return f"at this rate an hour gives ±{pct(rate)}, 4× the time halves it"


def log_half(target: float) -> float:
    """A relative half-width of the ratio (0.03 for ±3 %) on the log scale."""
    return math.log1p(target)


def candidates(n_star: float, lo: int, hi: int) -> list[int]:
    """Round windows between ``lo`` and ``hi``, the bounds, and n* rounded (when inside)."""
    out = {lo, hi}
    for exp in range(0, 9):
        for m in NICE:
            n = int(round(m * 10**exp))
            if lo <= n <= hi:
                out.add(n)
    if math.isfinite(n_star):
        out.add(min(hi, max(lo, round(n_star))))
    return sorted(out)


def exact_windows(
    parts: Parts, h: float, level: float, k_min: int, lo: int, hi: int, span: int = 40
) -> list[int]:
    """For each of the first ``span`` pair counts k, the shortest window that reaches the
    half-width ``h`` with k pairs (where the integer k matters most: few long runs)."""
    out = []
    for k in range(k_min, k_min + span):
        q = t_quantile(level, k - 1)
        room = k * (h / q) ** 2 / 2 - parts.var_between
        if room <= 0 or parts.var_within <= 0:
            continue
        n = math.ceil(parts.var_within / room)
        if n < lo:
            break
        if n <= hi:
            out.append(n)
    return out


def plan(
    parts: Parts,
    target: float,
    level: float,
    bounds: tuple[int, int] = WINDOW_BOUNDS,
    k_min: int = MIN_PAIRS,
) -> Plan:
    """The window and pairs that reach a CI half-width of ±``target`` (relative) at
    confidence 1 − ``level`` in the least wall time."""
    if not 0 < target < 1:
        raise ValueError(f"the precision target must be between 0 and 100 % (got {target})")
    lo, hi = bounds
    h = log_half(target)
    best: tuple[float, int, int] | None = None
    windows = candidates(parts.n_star(), lo, hi) + exact_windows(parts, h, level, k_min, lo, hi)
    for n in sorted(set(windows)):
        k = pairs_needed(2 * parts.var_run(n), h, level, k_min)
        cost = 2 * k * parts.run_s(n)
        if best is None or cost < best[0] - 1e-9:  # windows ascend: a tie keeps the shorter
            best = (cost, k, n)
    assert best is not None
    cost, k, n = best
    hw = half_width(2 * parts.var_run(n), k, level)
    return Plan(n, k, cost, math.expm1(hw), target, 1 - level, parts.n_star())


def expect(
    pl: Plan,
    parts: Parts,
    looks: list[int],
    precision_from: int,
    sims: int = 4000,
    seed: int = 0,
) -> Plan:
    """``pl`` with what its sequence is expected to spend and reach: A/A pairs drawn with the
    parts' variance, stopped as ``run_planned`` stops on precision (at the first of ``looks``
    from ``precision_from`` pairs whose t interval is within the target, else at the last).
    The planned look alone is a poor guide with few pairs: its spread has few degrees of
    freedom, so about half the sequences run past it and end narrower than planned."""
    var_pair = 2 * parts.var_run(pl.tasks)
    k_max = max(looks)
    rng = np.random.default_rng(seed)
    d = rng.standard_normal((sims, k_max)) * math.sqrt(max(var_pair, 0.0))
    h = log_half(pl.target)
    level = 1 - pl.confidence
    stop = np.full(sims, k_max)
    width = np.full(sims, np.nan)
    for k in sorted(looks):
        if k < 2:
            continue
        hw = t_quantile(level, k - 1) * d[:, :k].std(axis=1, ddof=1) / math.sqrt(k)
        now = np.isnan(width) & (((hw <= h) & (k >= precision_from)) | (k == k_max))
        stop[now], width[now] = k, hw[now]
    wall = 2 * float(stop.mean()) * parts.run_s(pl.tasks)
    return replace(pl, expected_wall_s=wall, expected_half_width=math.expm1(np.median(width)))


def most_pairs(k_plan: int, overrun: float = OVERRUN) -> int:
    """The pairs a plan of ``k_plan`` may run on to (an even number, at least k_plan)."""
    return max(k_plan, 2 * math.ceil(k_plan * overrun / 2))


def planned_level(alpha: float) -> float:
    """The level the planned look is tested at: the gate's last-look share of alpha (what
    ``split_level`` leaves the main comparison when there are others)."""
    return split_level(alpha, 1, EARLY_SHARE)[1]


def precision_looks(n_min: int, k_plan: int, k_max: int, alpha: float) -> dict[int, float]:
    """Pairs at which a planned comparison looks → the level its verdict is tested at.

    The planned look ``k_plan`` is tested at ``planned_level`` (most of alpha). The early looks
    (from ``n_min``, in the gate's ~1.5× steps) and the looks after the planned one (at each
    ABBA block end up to ``k_max``, for when the parts were underestimated) share the rest.
    The levels add up to alpha, so the false-alarm rate of the verdict stays at most alpha
    however the sequence stops (the union bound), as with the gate's ``look_levels``."""
    k_max = max(k_plan, k_max)
    before = [k for k in looks(n_min, k_plan)[:-1] if 2 <= k < k_plan]
    after = [*range(k_plan + 2, k_max, 2), k_max] if k_max > k_plan else []
    others = sorted(set(before + after))
    early, last = split_level(alpha, len(others), EARLY_SHARE)
    return dict(sorted({**{k: early for k in others}, k_plan: last}.items()))


def reached(a: list[float], b: list[float], level: float) -> float:
    """The relative half-width of the paired t interval of log B − log A at ``level``."""
    d = np.log(np.asarray(b, float)) - np.log(np.asarray(a, float))
    if len(d) < 2:
        return math.inf
    return math.expm1(half_width(float(np.var(d, ddof=1)), len(d), level))


@dataclass
class Reached:
    """How a planned comparison ended: the decision of its last look, the half-width it
    reached, why it stopped, and its pairs."""

    decision: Decision
    half_width: float
    stopped: str  # "precision reached", "decided", "time budget", "most runs"
    a: list[float]
    b: list[float]


@dataclass(frozen=True)
class Looks:
    """A planned comparison's looks and stopping rule, shared by ``compare --precision``
    (``run_planned``) and every verb that stops its comparisons early (history, explain).

    ``levels`` (``precision_looks``): runs per side → the level the verdict is tested at;
    they add up to the comparison's alpha. The sequence stops once the interval at
    ``precision_level`` is within ±``target`` (from ``precision_from`` runs per side), or
    the verdict is faster/slower, or at the last look."""

    levels: dict[int, float]
    target: float
    precision_level: float
    precision_from: int = 2
    #: history and explain ask whether the step is there: an interval within the target that
    #: still shows a change (it excludes 1) while the verdict at the look's spent level is
    #: undecided measures on, until the step is decided or the looks end
    until_decided: bool = False

    @property
    def last(self) -> int:
        return max(self.levels)

    def due(self, n: int, late: bool = False) -> float | None:
        """The level to test at ``n`` runs per side: the look's own; out of time (``late``),
        the next look's that is not spent yet, so the levels still add up to at most alpha;
        None: no look at ``n``."""
        if n in self.levels:
            return self.levels[n]
        if late and 2 <= n < self.last:
            return self.levels[min(k for k in self.levels if k > n)]
        return None

    def stop(self, dec: Decision, hw: float, n: int, late: bool = False) -> str | None:
        """Why the sequence stops after a look with verdict ``dec`` and half-width ``hw``
        at ``n`` runs per side (None: it goes on)."""
        # an interval that excludes 1 still shows a change the verdict has not decided
        shows = abs(math.log(dec.ratio)) > math.log1p(hw)
        measure_on = self.until_decided and not dec.decided and shows
        if hw <= self.target and n >= self.precision_from and not measure_on:
            return "precision reached"
        if dec.different:
            return "decided"
        if late or n >= self.last:
            return "time budget" if late else "most runs"
        return None

    def spent(self, alpha: float) -> str:
        """The sentence that states the error spent on looking more than once at ``alpha``."""
        planned = max(self.levels, key=self.levels.__getitem__)
        ks = ", ".join(f"{k} (planned)" if k == planned else str(k) for k in self.levels)
        return (
            f"looks at {ks} runs per side, at levels adding up to α = {alpha:.3g} "
            f"({self.levels[planned]:.3g} at the planned look)"
        )


def run_planned(
    run_a: Callable[[], float],
    run_b: Callable[[], float],
    target: float,
    levels: dict[int, float],
    precision_level: float,
    threshold: float = 0.05,
    higher_is_better: bool = False,
    out_of_time: Callable[[], bool] = lambda: False,
    precision_from: int = 2,
    on_look: Callable[[Decision, float], None] | None = None,
) -> Reached:
    """Run A and B interleaved (ABBA) and look at the pairs of ``levels`` (see
    ``precision_looks``): stop once the paired t interval at ``precision_level`` (the plan's)
    is within ±``target`` — a rule on the spread alone, as Chow–Robbins' fixed-width
    interval — or the verdict (at the look's spent level) is faster/slower: the answer is
    known; else at the last look (``Looks``).
    When ``out_of_time`` says so the sequence looks at once, at the level of the next look it
    has not spent (so the levels still add up to at most alpha), and stops. The spread is
    trusted from ``precision_from`` pairs on (half the plan's, so a lucky small sample of the
    first few pairs does not end it)."""
    rule = Looks(levels, target, precision_level, precision_from)
    a: list[float] = []
    b: list[float] = []
    for side in abba(rule.last):
        values, run = (a, run_a) if side == "A" else (b, run_b)
        if len(values) >= rule.last:
            continue
        values.append(run())
        n = len(a)
        if n != len(b):
            continue
        late = out_of_time() and n >= 2
        level = rule.due(n, late)
        if level is None:
            continue
        dec = decide(a, b, threshold, level, higher_is_better, paired=True)
        hw = reached(a, b, precision_level)
        if on_look:
            on_look(dec, hw)
        why = rule.stop(dec, hw, n, late)
        if why:
            return Reached(dec, hw, why, a, b)
    raise AssertionError("the ABBA order ends at a look")
