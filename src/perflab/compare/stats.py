"""The gate's statistics: is B faster, slower, or no different from A beyond a threshold?

Runs are compared on the log scale (a ratio of run times is what stays comparable across
machines and loads): the estimate is the ratio of geometric means B / A.

* **Paired** (the gate's default): the ABBA order puts A's i-th run next to B's i-th run, so
  each pair shares the machine's state of that moment. The test is a one-sample t-test on the
  pairs' log differences, with its t interval (``analysis.stats.paired_t``). On a shared host
  whose speed drifts slowly, the pair difference cancels the drift that an unpaired test
  counts as noise.
* **Unpaired** (Welch): a Welch t-test on the logs, with a BCa bootstrap CI
  (``analysis.stats.bootstrap_ci``). Used where samples are not paired (releases in a history).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from perflab.analysis.exact import EXACT_RTOL
from perflab.analysis.stats import (
    bootstrap_ci,
    norm_ppf,
    paired_t,
    split_level,
    t_interval,
    welch_p,
)
from perflab.run.record import HIGHER_IS_BETTER as HIGHER_IS_BETTER  # compare names it too

VERDICTS = ("faster", "slower", "no difference", "inconclusive")
BOOTSTRAP_RESAMPLES = 2000


@dataclass
class Decision:
    """One look at two samples. ``ratio`` is geometric mean of B ÷ geometric mean of A in the
    metric's own unit; ``verdict`` says what B is relative to A."""

    n_a: int
    n_b: int
    ratio: float
    ci_low: float
    ci_high: float
    confidence: float
    p_value: float | None  # None: exact data (every pair, or every run, equal): no test
    alpha: float
    threshold: float
    verdict: str

    @property
    def decided(self) -> bool:
        return self.verdict != "inconclusive"

    @property
    def different(self) -> bool:
        return self.verdict in ("faster", "slower")

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "decided": self.decided}


def _mean_diff(x: np.ndarray, y: np.ndarray, axis: int = -1) -> np.ndarray:
    return np.asarray(np.mean(x, axis=axis) - np.mean(y, axis=axis))


def log_ratio_ci(
    la: np.ndarray, lb: np.ndarray, confidence: float, seed: int = 0
) -> tuple[float, float]:
    """BCa bootstrap CI of mean(log B) − mean(log A), each side resampled on its own.

    With every value on a side equal the bootstrap is degenerate: the CI is then the point.
    """
    d = float(lb.mean() - la.mean())
    if np.ptp(la) == 0 and np.ptp(lb) == 0:
        return d, d
    out: tuple[float, float] = (d, d)
    for method in ("BCa", "percentile"):  # BCa can fail on tiny or tied samples
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = bootstrap_ci(
                (lb, la),
                _mean_diff,
                confidence_level=confidence,
                method=method,
                n_resamples=BOOTSTRAP_RESAMPLES,
                rng=np.random.default_rng(seed),
                vectorized=True,
            )
        if all(math.isfinite(x) for x in out):
            break
    return out


def gate_welch_p(la: np.ndarray, lb: np.ndarray) -> float:
    """The gate's unpaired p: the one Welch test (``analysis.stats.welch_p``) on the logs.
    Exact data (both sides constant: no test is defined) decide by their values, as the
    paired test's constant differences do: 1 when equal, 0 when they differ (the CI is the
    exact difference, so the verdict then rests on the threshold alone)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # scipy's precision warning on nearly equal runs
        p = welch_p(lb, la)
    if p is None:
        return 1.0 if la[0] == lb[0] else 0.0
    return p


def paired_ratio(ratios: Sequence[float], confidence: float = 0.95) -> tuple[float, float, float]:
    """Geometric mean of paired ratios B/A with ``paired_t``'s t interval, back on the
    ratio scale; nan bounds below two pairs (no interval can be given)."""
    logs = np.log(np.asarray(ratios, float))
    if len(logs) < 2:
        return math.exp(float(logs.mean())), math.nan, math.nan
    _, lo, hi = paired_t(logs, confidence)
    return math.exp(float(logs.mean())), math.exp(lo), math.exp(hi)


def decide(
    a: Sequence[float],
    b: Sequence[float],
    threshold: float = 0.05,
    alpha: float = 0.01,
    higher_is_better: bool = False,
    seed: int = 0,
    paired: bool = False,
) -> Decision:
    """Compare samples ``a`` (baseline) and ``b`` (candidate) of a positive metric.

    * ``slower``/``faster``: p < alpha, the (1 − alpha) CI of the ratio excludes 1, and the
      estimate is beyond the practical threshold (default 5 %) in that direction — asv's rule
      (significance *and* a minimum factor), so tiny real changes never fail a gate.
    * ``no difference``: the CI lies within ±threshold (equivalence is shown).
    * ``inconclusive``: neither, yet — more runs are needed to tell.

    ``paired``: ``a[i]`` and ``b[i]`` were measured side by side (see the module docstring).
    """
    if len(a) < 2 or len(b) < 2:
        raise ValueError("each side needs at least 2 runs")
    if paired and len(a) != len(b):
        raise ValueError("a paired comparison needs as many runs on each side")
    la, lb = np.log(np.asarray(a, float)), np.log(np.asarray(b, float))
    d = float(lb.mean() - la.mean())
    if exact_samples(la, lb, paired):
        return _exact_decision(len(a), len(b), d, threshold, alpha, higher_is_better)
    if paired:
        p, lo, hi = paired_t(lb - la, 1 - alpha)
    else:
        lo, hi = log_ratio_ci(la, lb, 1 - alpha, seed)
        p = gate_welch_p(la, lb)
    bound = math.log1p(threshold)
    worse = -d if higher_is_better else d
    significant = p < alpha and (lo > 0 or hi < 0)
    if significant and worse >= bound:
        verdict = "slower"
    elif significant and -worse >= bound:
        verdict = "faster"
    elif -bound <= lo and hi <= bound:
        verdict = "no difference"
    else:
        verdict = "inconclusive"
    return Decision(
        len(a),
        len(b),
        math.exp(d),
        math.exp(lo),
        math.exp(hi),
        1 - alpha,
        p,
        alpha,
        threshold,
        verdict,
    )


def exact_samples(la: np.ndarray, lb: np.ndarray, paired: bool) -> bool:
    """Whether the logs are exact data (a deterministic metric): every pair's difference
    equal (paired), or every run of each side equal, to rounding (analysis/exact.py)."""
    if paired:
        return bool(np.ptp(lb - la) <= EXACT_RTOL)
    return bool(np.ptp(la) <= EXACT_RTOL and np.ptp(lb) <= EXACT_RTOL)


def _exact_decision(
    n_a: int, n_b: int, d: float, threshold: float, alpha: float, higher_is_better: bool
) -> Decision:
    """Exact data: the ratio is what was measured, with no test (a t statistic of 0/0 gave
    p 0 or 1) and no interval width; the verdict is the ratio against the threshold."""
    bound = math.log1p(threshold)
    worse = -d if higher_is_better else d
    verdict = "slower" if worse >= bound else "faster" if -worse >= bound else "no difference"
    r = math.exp(d)
    return Decision(n_a, n_b, r, r, r, 1 - alpha, None, alpha, threshold, verdict)


def abba(n_per_side: int) -> list[str]:
    """The interleaved order ABBA BAAB ABBA …: each block of four cancels a linear drift."""
    out: list[str] = []
    for i in range(math.ceil(n_per_side / 2)):
        out += list("ABBA" if i % 2 == 0 else "BAAB")
    return out


def looks(n_min: int, n_max: int) -> list[int]:
    """Runs per side at which the sequential gate looks: from ``n_min``, each look about
    1.5× the last (at ABBA block ends, so even), and ``n_max`` last."""
    n_min = max(2, min(n_min, n_max))
    ks = []
    k = n_min
    while k < n_max:
        ks.append(k)
        k = max(k + 2, 2 * math.ceil(k * 1.5 / 2))
    return [*ks, n_max]


#: Share of alpha spent on the early looks together; the last look gets the rest.
EARLY_SHARE = 0.2


def look_levels(n_min: int, n_max: int, alpha: float, sequential: bool = True) -> dict[int, float]:
    """Each look's runs per side → the level it is tested at.

    The levels add up to alpha, so by the union bound the false-alarm rate of the whole
    sequence stays at most alpha however early it stops (a Bonferroni split). The split is
    weighted to the last look, in the spirit of Haybittle–Peto: early looks share
    ``EARLY_SHARE`` of alpha and stop only on clear changes; the last look, where a
    comparison that needed every run ends, keeps most of the power.
    """
    ks = looks(n_min, n_max) if sequential else [n_max]
    early, last = split_level(alpha, len(ks) - 1, EARLY_SHARE)
    return {**{k: early for k in ks[:-1]}, n_max: last}


def sequential(
    run_a: Callable[[], float],
    run_b: Callable[[], float],
    n_min: int,
    n_max: int,
    threshold: float = 0.05,
    alpha: float = 0.01,
    higher_is_better: bool = False,
    paired: bool = True,
    early_stop: bool = True,
    on_look: Callable[[Decision], None] | None = None,
    levels: dict[int, float] | None = None,
    out_of_time: Callable[[], bool] | None = None,
) -> tuple[Decision, list[float], list[float]]:
    """Run A and B interleaved (ABBA) and look at the ends of blocks from ``n_min`` runs per
    side (at the levels of ``look_levels``), stopping as soon as the verdict is decided, or
    at ``n_max``; without ``early_stop`` only at ``n_max``. ``on_look`` sees every look's
    decision; an exception from a run ends the sequence (the gate's failed run).

    ``levels`` (runs per side → level, adding up to at most alpha) replace ``look_levels``'
    and may go past ``n_max`` (``compare --max-time``: ``busy.long_looks``); the last of
    them ends the sequence. When ``out_of_time`` says so at a pair's end, the sequence looks
    at once at the level of the next look it has not spent (so the levels still add up to
    at most alpha) and stops."""
    levels = levels or look_levels(n_min, n_max, alpha, early_stop)
    last = max(levels)
    a: list[float] = []
    b: list[float] = []
    decision: Decision | None = None
    for side in abba(last):
        if side == "A" and len(a) < last:
            a.append(run_a())
        elif side == "B" and len(b) < last:
            b.append(run_b())
        n = len(a)
        if n != len(b) or (decision is not None and decision.n_a >= n):
            continue
        late = out_of_time is not None and n >= 2 and n < last and out_of_time()
        level = levels.get(n) if not late else levels[min(k for k in levels if k >= n)]
        if level is None:
            continue
        decision = decide(a, b, threshold, level, higher_is_better, paired=paired)
        if on_look:
            on_look(decision)
        if decision.decided or n >= last or late:
            break
    assert decision is not None
    return decision, a, b


def recommend_n(
    sigma_log: float, effect: float, alpha: float, power: float = 0.8, paired: bool = False
) -> int:
    """Runs per side to detect a ratio of 1 + ``effect`` with the given power at level
    ``alpha`` (normal approximation), at least 4. Unpaired, ``sigma_log`` is the sd of one
    run's log; paired, the sd of a pair's log difference."""
    z = norm_ppf(1 - alpha / 2) + norm_ppf(power)
    k = 1 if paired else 2
    return max(4, math.ceil(k * (z * sigma_log / math.log1p(effect)) ** 2))


def pair_sd(values: Sequence[float]) -> float:
    """sd of the log differences of consecutive pairs (x1 − x0, x3 − x2, …) of runs in time
    order: the noise a paired comparison sees on this sequence (0 with fewer than 2 pairs)."""
    logs = np.log(np.asarray(values, float))
    m = len(logs) // 2 * 2
    diffs = logs[1:m:2] - logs[0:m:2]
    return float(diffs.std(ddof=1)) if len(diffs) > 1 else 0.0


def geo_mean_ci(
    values: Sequence[float], confidence: float = 0.95
) -> tuple[float, float | None, float | None]:
    """Geometric mean of positive values with a BCa bootstrap CI; with two values, the
    Student-t interval of the logs (a bootstrap of two resamples three points); with one,
    no interval (None). Identical values: the point, exactly."""
    logs = np.log(np.asarray(values, float))
    m = float(logs.mean())
    if len(logs) < 2:
        return math.exp(m), None, None
    if np.ptp(logs) == 0:
        return math.exp(m), math.exp(m), math.exp(m)
    if len(logs) == 2:
        lo, hi = t_interval(confidence, 1, loc=m, scale=float(np.std(logs, ddof=1)) / math.sqrt(2))
        return math.exp(m), math.exp(lo), math.exp(hi)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        lo, hi = bootstrap_ci(
            (logs,),
            np.mean,
            confidence_level=confidence,
            method="BCa",
            n_resamples=BOOTSTRAP_RESAMPLES,
            rng=np.random.default_rng(0),
        )
    if not (math.isfinite(lo) and math.isfinite(hi)):
        lo, hi = m, m
    return math.exp(m), math.exp(lo), math.exp(hi)


def location(values: Sequence[float]) -> dict[str, float]:
    """A sample's geometric mean with its 95 % BCa CI, and its median (empty if no values)."""
    if not values:
        return {}
    gm, lo, hi = geo_mean_ci(values)
    out = {"geo_mean": gm, "median": float(np.median(values))}
    return out if lo is None or hi is None else {**out, "ci_low": lo, "ci_high": hi}
