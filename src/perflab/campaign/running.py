"""Out of the running: when a campaign's question is which set is fastest (``campaign create
--fastest`` or ``campaign run --fastest``: the goal stored with the campaign), a set also stops
once it is clearly slower than the best set, not only once its interval is narrow enough
(``stopping``); ``campaign extend --precision`` plans no more runs for it.

The rule, at a look before replicate block r (from ``FIRST_LOOK`` blocks on, at compare's
~1.5× steps: ``schedule``): every set still in play gets the t interval of its mean log
metric over its runs of blocks 0 … r−1, at confidence 1 − α_r / m (m: the campaign's sets,
``bonferroni_level``); the best is the set whose interval ends lowest. A set whose interval
lies wholly above the best's upper end by more than the practical threshold δ (log(1 + δ)
on the log scale) is out of the running: its remaining planned runs are not needed.

Why it is sound. Look i's level α_i is ``spent_level(α, P, i)`` (P the looks of the blocks
first planned: α/P each, each later look half the last), so the levels add up to at most α
however many blocks ``campaign extend`` adds. Take the intervals every set would have at
every look had it never stopped: by the union bound, all of them cover their set's true mean
with probability ≥ 1 − α. Then no set within δ of the fastest is ever stopped: a set j is
stopped only when lower_j > upper_b + δ for the best b; with j's and b's intervals covering,
μ_j ≥ lower_j > upper_b + δ ≥ μ_b + δ ≥ μ* + δ (μ* the fastest set's true mean). The data
of a look are fixed by its block (runs of blocks before r, looked at only once every one of
them is done), so a resumed campaign replays a look exactly and spends nothing more. Only
sets that have never stopped are in play (a set stopped at an earlier look has its interval
at a run count its own values chose, which need not cover as a fixed count's does: it is
neither judged nor taken as the best). The guarantee assumes what the t interval assumes:
independent runs, normal on the log scale, a set's run count not chosen from its values.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from perflab.campaign.definition import CampaignDef
from perflab.errors import PerflabError

#: Where the definition keeps the goal (``design_info``).
KEY = "fastest"
#: Replicate blocks before the first look: a t interval of fewer runs has too few degrees
#: of freedom to stop anything at a Bonferroni level.
FIRST_LOOK = 3
#: Defaults of ``--threshold`` and ``--alpha`` (compare's threshold, the analysis's α).
THRESHOLD = 0.05
ALPHA = 0.05
#: The looks ``schedule`` lists at most (~1.5× steps: far past any campaign's blocks).
MOST_LOOKS = 60


@dataclass(frozen=True)
class Goal:
    """Stop a set once it is slower than the best by more than ``threshold`` (relative), at
    a false-stop rate of at most ``alpha`` over all sets and looks."""

    threshold: float
    alpha: float


def goal(definition: CampaignDef) -> Goal | None:
    """The campaign's stored goal (None: its question is its effects, no set leaves early)."""
    g = definition.design_info.get(KEY)
    return None if g is None else Goal(float(g["threshold"]), float(g["alpha"]))


def stoppable(definition: CampaignDef) -> bool:
    """Whether ``campaign run`` may skip this campaign's planned runs: a design of its own,
    not a search's ordered runs nor the zoo's explicit plan (which stop themselves)."""
    return (
        not definition.imported
        and definition.design != "ordered"
        and "plan" not in definition.design_info
    )


def asked(fastest: bool, threshold: float | None, alpha: float | None,
          was: Goal | None = None) -> Goal | None:  # fmt: skip
    """The goal ``--fastest [--min-effect F] [--alpha F]`` asks for (of ``campaign create``
    or ``campaign run``), a value not given kept from ``was`` (the stored goal) else the
    default; None without --fastest. PerflabError on bad input (nothing is stored)."""
    if not fastest:
        if threshold is not None or alpha is not None:
            raise PerflabError("--min-effect and --alpha go with --fastest")
        return None
    was = was or Goal(THRESHOLD, ALPHA)
    new = Goal(was.threshold if threshold is None else threshold,
               was.alpha if alpha is None else alpha)  # fmt: skip
    if not 0 < new.threshold < 1:
        raise PerflabError(
            f"--min-effect {new.threshold:g}: a fraction between 0 and 1 (0.05: 5 %)"
        )
    if not 0 < new.alpha < 1:
        raise PerflabError(f"--alpha {new.alpha:g}: a rate between 0 and 1")
    return new


def resolve(
    definition: CampaignDef,
    fastest: bool,
    threshold: float | None,
    alpha: float | None,
    ran: bool = True,
) -> Goal | None:
    """The goal ``campaign run --fastest [--threshold F] [--alpha F]`` asks for (None without
    --fastest: a stored goal still holds). Another goal than the stored one (``campaign
    create --fastest``'s, or an earlier run's) replaces it only while no run of the campaign
    is stored (``ran`` False): until then no look has spent any error. PerflabError on bad
    input, nothing stored."""
    name = definition.name
    stored = goal(definition)
    new = asked(fastest, threshold, alpha, stored)
    if new is None:
        return None
    if not stoppable(definition):
        raise PerflabError(
            f"campaign {name!r} has no design of its own to stop early "
            "(a search's, the zoo's or imported): --fastest does not apply"
        )
    if ran and stored is not None and stored != new:
        raise PerflabError(f"campaign {name!r} already stops sets out of the running at "
                           f"--min-effect {stored.threshold:g} --alpha {stored.alpha:g}: its "
                           "looks so far spent their error at those")  # fmt: skip
    return new


@functools.cache
def schedule(planned_blocks: int) -> tuple[tuple[int, ...], int]:
    """The block counts at which sets are judged, and how many of them the blocks first
    planned hold (P): compare's looks (~1.5× steps) from ``FIRST_LOOK`` to the last block
    boundary of the plan, then on at the same steps for blocks added later."""
    from perflab.compare.stats import looks

    last = planned_blocks - 1
    planned = looks(FIRST_LOOK, last) if last >= FIRST_LOOK else []
    start = planned[-1] if planned else FIRST_LOOK
    more = looks(start, 10**9)[: MOST_LOOKS - len(planned)]
    return tuple(sorted({*planned, *more})), len(planned)


def look_level(g: Goal, planned_blocks: int, block: int) -> tuple[int, float] | None:
    """(look number from 1, its share of alpha) of the look before ``block``; None: none."""
    from perflab.analysis.stats import spent_level

    points, planned = schedule(planned_blocks)
    if block not in points:
        return None
    i = points.index(block) + 1
    return i, spent_level(g.alpha, max(1, planned), i)


def set_confidence(level: float, sets: int) -> float:
    """A set's interval's confidence at a look of ``level``: Bonferroni over the sets."""
    from perflab.analysis.stats import bonferroni_level

    return 1 - bonferroni_level(level, sets)


def judge(
    logs: dict[str, list[float]], open_sets: Iterable[str], confidence: float, threshold: float
) -> dict[str, dict[str, Any]]:
    """The sets of ``open_sets`` out of the running: their interval (of the mean of their
    ``logs`` at ``confidence``) lies wholly above the upper end of the best's (the interval
    that ends lowest) by more than log(1 + ``threshold``). Pure: the simulations call it.
    Returns set -> its interval, the best's (metric units; a set whose runs are all equal,
    ``exact``, has its ``value`` and no interval), and the ratio of its lower end to the
    best's upper end."""
    from perflab.analysis.exact import EXACT_RTOL
    from perflab.analysis.stats import t_interval

    names = sorted(s for s, y in logs.items() if len(y) >= 2)
    ys = [np.asarray(logs[s], float) for s in names]
    n = np.array([len(y) for y in ys], float)
    mean = np.array([y.mean() for y in ys])
    sd = np.array([y.std(ddof=1) for y in ys])
    # exact: no spread beyond rounding (logs: already relative), its "interval" the point
    exact = sd <= EXACT_RTOL
    se = np.where(exact, 1.0, sd) / np.sqrt(n)
    # one t quantile call for every set (the simulations call this thousands of times)
    lo, hi = t_interval(confidence, n - 1, loc=mean, scale=se)
    lo, hi = np.where(exact, mean, lo), np.where(exact, mean, hi)
    ci = {s: (float(lo[i]), float(hi[i])) for i, s in enumerate(names)}
    if len(ci) < 2:
        return {}
    best = min(ci, key=lambda s: (ci[s][1], s))
    top, b = ci[best][1], names.index(best)

    def shown(i: int, who: str) -> dict[str, Any]:  # who: "" (the set) or "best_"
        if exact[i]:
            return {f"{who}interval": None, f"{who}exact": True, f"{who}value": math.exp(mean[i])}
        return {f"{who}interval": [math.exp(lo[i]), math.exp(hi[i])], f"{who}exact": False}

    out = {}
    for s in sorted(set(open_sets) & set(ci) - {best}):
        i = names.index(s)
        if ci[s][0] - top > math.log1p(threshold):
            out[s] = {
                **shown(i, ""),
                "best": best or "base",
                **shown(b, "best_"),
                "best_runs": int(n[b]),
                "ratio": math.exp(ci[s][0] - top),
                "confidence": confidence,
                "half_width": math.expm1((ci[s][1] - ci[s][0]) / 2),
            }
    return out


def stopped_before(notes: list[dict[str, Any]], block: int) -> set[str]:
    """The sets (keyed as ``stopping`` keys them: "" for the base) stopped at a look before
    ``block``'s (a note from before looks were numbered: before every look)."""
    return {("" if n["set"] == "base" else n["set"]) for n in notes if n.get("block", -1) < block}


def _span(note: dict[str, Any], who: str, runs: int | None) -> str:
    """A stopped set's (or its best's) interval as the text says it: "2,000 (exact: no
    spread in 3 runs)" when its runs were all equal (a zero-width interval, as notes from
    before the ``exact`` flag store it, is one), else "lo–hi" (the caller adds its level)."""
    iv, many = note.get(f"{who}interval"), f" in {runs} runs" if runs is not None else ""
    if iv is None or note.get(f"{who}exact") or iv[0] == iv[1]:
        value = note.get(f"{who}value", iv[0] if iv else math.nan)
        return f"{value:,.4g} (exact: no spread{many})"
    return f"{iv[0]:,.4g}–{iv[1]:,.4g}"


def reason(note: dict[str, Any]) -> str:
    """Why a set's remaining runs were not needed, in one line (``--json``'s ``reason``)."""
    if note.get("why") != "out of the running":
        if note.get("exact") or note["half_width"] == 0:
            return f"known: exact (no spread in {note['runs']} runs)"
        return f"known: ±{note['half_width']:.1%} reached in {note['runs']} runs"
    own = _span(note, "", note["runs"])
    if "(exact" not in own:
        own += f" ({note['confidence']:.2%} interval of {note['runs']} runs)"
    best = _span(note, "best_", note.get("best_runs"))
    return (
        f"out of the running: {own} lies above the best set {note['best']}'s {best} "
        f"by ×{note['ratio']:.3f}, more than the threshold {note['threshold']:.1%} (look "
        f"{note['look']}, after {note['block']} blocks: level {note['level']:.3g}, "
        "Bonferroni over the sets)"
    )


def spent(g: Goal, planned_blocks: int, sets: int) -> dict[str, Any]:
    """The error spent on looking more than once, stated (``status``, the report)."""
    from perflab.analysis.stats import spent_level

    points, planned = schedule(planned_blocks)
    shown = points[: max(planned, 1) + 1]
    levels = {k: spent_level(g.alpha, max(1, planned), i + 1) for i, k in enumerate(shown)}
    text = (
        f"out of the running: a set stops once its interval lies above the best set's by more "
        f"than {g.threshold:.1%}; looks after {', '.join(map(str, shown))}… blocks at levels "
        f"adding up to α = {g.alpha:g} (each Bonferroni over {sets} sets; "
        f"{levels[shown[0]]:.3g} each over the {planned} looks planned, then halving), so "
        f"the chance that any set within {g.threshold:.1%} of the fastest is stopped is "
        f"at most {g.alpha:g}"
    )
    return {**asdict(g), "looks": {str(k): v for k, v in levels.items()}, "line": text}
