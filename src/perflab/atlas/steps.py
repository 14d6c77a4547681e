"""What a detected step is in the atlas, pure: its window (the two measured points the gate
confirms it between, a point beyond each side of the change so that a change point placed one
point off still lies inside), whether a newly detected step is one already stored, and which
speed-up undoes which regression."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from perflab.analysis.stats import halving_level
from perflab.atlas.detect import Found

#: Points beyond the change on each side of the window (kept inside the segments).
MARGIN = 1
#: A speed-up is a regression's fix when it undoes at least this share of it (log scale).
FIX_SHARE = 0.5
#: The gate's rounds a suspected step may take: an undecided round is followed by another.
ROUNDS = 4


def round_plan(alpha: float, runs: int, done: int) -> tuple[float, int]:
    """(level, most runs a side) of a step's confirmation round ``done`` (0 first): each round
    a fresh paired gate with twice the runs of the one before, at half its level, so that the
    rounds together keep a false step under ``alpha`` (their levels add up to less)."""
    return halving_level(alpha, done), 3 * runs * 2**done


def rounds_done(data: dict[str, Any]) -> list[dict[str, Any]]:
    """The confirmation rounds a step has had (a store from before the rounds: its one
    inconclusive confirmation counts as the first)."""
    if "rounds" in data:
        return list(data["rounds"])
    conf = data.get("confirm")
    return [{**conf, "round": 1}] if conf and conf.get("verdict") == "inconclusive" else []


def retried(state: str, data: dict[str, Any]) -> bool:
    """Whether an undecided step waits for another round of its gate (not one whose end
    failed, nor one whose rounds are spent)."""
    if state != "undecided" or "why" in data or data.get("search"):
        return False
    return bool(data.get("retry", len(rounds_done(data)) < ROUNDS and "confirm" in data))


def window(found: Found, margin: int = MARGIN) -> tuple[int, int]:
    """The series' indices (a, b) the step lies between: ``margin`` points beyond the change,
    never beyond the segments either side of it (which may hold other steps)."""
    return max(found.lo, found.index - 1 - margin), min(found.hi - 1, found.index + margin)


def same(a_ord: int, b_ord: int, direction: str, stored: dict[str, Any]) -> bool:
    """Whether a step detected between points ``a_ord`` and ``b_ord`` (their order in the
    history) is the stored one: the same direction, and windows that overlap."""
    return stored["direction"] == direction and a_ord < stored["b_ord"] and stored["a_ord"] < b_ord


def ratio_of(step: dict[str, Any]) -> float:
    """The best estimate of a step's ratio: its confirmation's, else its detection's."""
    conf = step.get("confirm") or {}
    return float(conf.get("ratio") or step.get("detect", {}).get("ratio") or 1.0)


def fixes(steps: Sequence[dict[str, Any]]) -> list[tuple[int, int]]:
    """(fix, regression) pairs: a speed-up, after a regression of the same benchmark that no
    earlier speed-up fixed, undoing at least ``FIX_SHARE`` of it and not more than twice it.
    ``steps``: dicts with id, bench, direction, a_ord, b_ord and a ratio (``ratio_of``)."""
    out: list[tuple[int, int]] = []
    used: set[int] = set()
    for fix in sorted(steps, key=lambda s: s["a_ord"]):
        if fix["direction"] != "faster":
            continue
        lf = math.log(ratio_of(fix))
        for reg in sorted(steps, key=lambda s: -s["b_ord"]):
            if (reg["direction"] != "slower" or reg["id"] in used or reg["bench"] != fix["bench"]
                    or reg["b_ord"] > fix["a_ord"] + 1):  # fmt: skip
                continue
            lr = math.log(ratio_of(reg))
            if lr > 0 and FIX_SHARE * lr <= -lf <= 2 * lr:
                out.append((fix["id"], reg["id"]))
                used.add(reg["id"])
                break
    return out


def spread(n: int) -> list[int]:
    """0 … n − 1 in bit-reversed order (0, n/2, n/4, 3n/4, …): the order the series measures
    its points in, so neighbouring commits are measured far apart in time and a slow drift of
    the machine is noise between points, not a step between neighbours."""
    bits = max(1, (n - 1).bit_length())
    order = [int(format(i, f"0{bits}b")[::-1], 2) for i in range(1 << bits)]
    return [i for i in order if i < n]
