"""``tune --precision``: the final blocks sized from the measured variance, stopped when known.

The final blocks measure each set against the untreated base, block by block. With a target
they are planned from `perflab precision`'s stored parts (the window and the blocks whose
paired interval of the recommended set's speed-up, and the fastest set's when it differs,
reaches ±target) and looked at with compare's looks and stopping rule (``precision.Looks``):
once every compared set's interval is within the target or its verdict is decided, the
remaining blocks are not run. The alpha (0.05) is split over the compared sets (Bonferroni)
and each set's share over its looks, so the chance of any false "faster"/"slower" stays at
most alpha however the blocks stop. The search and the reduction keep their --budget;
--max-time bounds the final blocks (a plan longer is refused before anything runs).

Each look's new blocks are one campaign (``NAME.K-final``): a resumed tune replays the looks
from the stored runs and goes on where it stopped (no clock decides a stop, so the replay
is exact).
"""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from perflab.analysis.sizing import half_width, pairs_needed
from perflab.analysis.stats import bonferroni_level
from perflab.factors.catalog import CATEGORIES

if TYPE_CHECKING:
    from perflab.compare.precision import Looks, Parts, Plan
    from perflab.spec import RunSpec

#: Most columns a final block holds: the base, each nice level's set, the fastest set.
MOST_COLUMNS = 2 + len(CATEGORIES)
#: Sets compared with the base at the most (the recommended and the fastest): alpha's family.
MOST_COMPARED = 2
#: The alpha of the final blocks' verdicts, all compared sets together.
ALPHA = 0.05
#: A verdict faster/slower is a change beyond this (compare's default threshold).
THRESHOLD = 0.05
#: Blocks before the first look (the final stage's least, ``final.MIN_BLOCKS``).
FIRST_LOOK = 3


@dataclass
class FinalPlan:
    """What ``tune --precision`` plans before anything runs: the target, the window (every
    run of the tune has ``tasks`` tasks), the stored parts, the time budget of the final
    blocks; ``say`` prints the plan of the blocks when they start (None: quiet)."""

    target: float
    tasks: int
    parts: Parts
    max_time_s: float
    alpha: float = ALPHA
    say: Callable[[str], None] | None = field(default=None, compare=False)
    #: The parts at their 95 % intervals' ends (``plan_range.ends``): the blocks' range.
    bounds: tuple[Parts, Parts] | None = field(default=None, compare=False)


def plan_final(
    spec: RunSpec, metric: str, target: float, max_time_s: float
) -> tuple[Plan, FinalPlan]:
    """The plan of the final blocks at their largest (every nice level's set, two sets
    compared), from the stored parts of ``spec`` and ``metric``; bad input (exit 2, nothing
    run) without parts, for a command, or when it takes longer than ``max_time_s``."""
    from perflab.compare import precision as pp
    from perflab.compare.gate import Side
    from perflab.compare.planned import plan_or_refuse

    level = pp.planned_level(bonferroni_level(ALPHA, MOST_COMPARED))
    found, pl = plan_or_refuse(Side("base", spec), metric, target, max_time_s, ALPHA,
                               MOST_COLUMNS, 1.0, level)  # fmt: skip
    from perflab.compare.plan_range import ends

    return pl, FinalPlan(
        target, pl.tasks, found.parts, max_time_s, bounds=ends(found, 1.0, pl.tasks)
    )


def blocks_plan(fp: FinalPlan, columns: int, compared: int) -> tuple[Plan, Looks]:
    """The blocks of ``columns`` runs (the base and the sets) that reach ±target on each of
    ``compared`` sets at the window planned, and their looks: up to the plan's overrun while
    ``max_time_s`` allows, at levels adding up to each set's share of alpha."""
    from perflab.compare import precision as pp
    from perflab.compare.plan_range import ranged

    set_alpha = bonferroni_level(fp.alpha, compared)
    level = pp.planned_level(set_alpha)
    var_pair = 2 * fp.parts.var_run(fp.tasks)
    k = pairs_needed(var_pair, pp.log_half(fp.target), level)
    run_s = fp.parts.run_s(fp.tasks)
    k_max = max(k, min(pp.most_pairs(k), int(fp.max_time_s // (columns * run_s))))
    levels = pp.precision_looks(FIRST_LOOK, k, k_max, set_alpha)
    hw = math.expm1(half_width(var_pair, k, level))
    pl = pp.Plan(fp.tasks, k, columns * k * run_s, hw, fp.target, 1 - level,
                 fp.parts.n_star(), units=columns)  # fmt: skip
    pl = pp.expect(pl, fp.parts, list(levels), max(2, k // 2))
    # expect() prices a pair (2 runs); a block is ``columns`` runs
    assert pl.expected_wall_s is not None
    pl = dataclasses.replace(pl, expected_wall_s=pl.expected_wall_s * columns / 2)
    pl = ranged(pl, fp.bounds, list(levels), max(2, k // 2))
    return pl, pp.Looks(levels, fp.target, level, max(2, k // 2))


@dataclass
class Compared:
    """One set compared with the base in the final blocks: its column, its looks, why it
    stopped (None: still open) and the half-width reached."""

    name: str
    column: int
    stopped: str | None = None
    half_width: float = math.inf
    looks: list[dict[str, Any]] = field(default_factory=list)


def by_block(perms: list[np.ndarray], ys: list[float], columns: int) -> np.ndarray:
    """The blocks' values by column (column 0: the base), from the runs in run order."""
    out = np.empty((len(perms), columns))
    for r, p in enumerate(perms):
        out[r, p] = ys[r * columns : (r + 1) * columns]
    return out


def look(c: Compared, table: np.ndarray, n: int, rule: Looks, level: float) -> None:
    """Decide ``c`` at ``n`` blocks from the blocks where both runs are ok (a failed run
    pairs nothing); it stops when ``rule`` says so."""
    from perflab.compare import precision as pp
    from perflab.compare.stats import decide

    base, other = table[:, 0], table[:, c.column]
    good = np.isfinite(base) & np.isfinite(other) & (base > 0) & (other > 0)
    a, b = [float(v) for v in base[good]], [float(v) for v in other[good]]
    if len(a) < 2:
        if n >= rule.last:
            c.stopped = "too few pairs"
        return
    dec = decide(a, b, THRESHOLD, level, paired=True)
    c.half_width = pp.reached(a, b, rule.precision_level)
    c.looks.append({"blocks": n, "pairs": len(a), "ratio": dec.ratio, "verdict": dec.verdict,
                    "half_width": c.half_width, "level": level})  # fmt: skip
    c.stopped = rule.stop(dec, c.half_width, n)


def run_blocks(
    run: Callable[[list[set[str]], str], list[float]],
    block: list[frozenset[str]],
    compared: list[Compared],
    fp: FinalPlan,
    rng: np.random.Generator,
) -> tuple[list[np.ndarray], list[float], dict[str, Any]]:
    """Run the final blocks of ``block`` (column 0: the base) look by look until every one
    of ``compared`` has stopped; returns each block's order, the values in run order and
    what was reached (``precision`` of the result). ``run(sets, reason)`` runs one look's
    new blocks as one stage."""
    pl, rule = blocks_plan(fp, len(block), len(compared))
    spent = rule.spent(bonferroni_level(fp.alpha, len(compared))).replace("runs per side", "blocks")
    if fp.say:
        fp.say(f"plan of the final blocks: {pl.line()}; they stop once known")
    perms: list[np.ndarray] = []
    ys: list[float] = []
    t0 = time.monotonic()
    for n in sorted(rule.levels):
        new = [rng.permutation(len(block)) for _ in range(n - len(perms))]
        sets = [set(block[i]) for p in new for i in p]
        why = f"blocks {len(perms) + 1}-{n} of the base and {len(block) - 1} set(s), random order"
        ys += run(sets, why)
        perms += new
        table = by_block(perms, ys, len(block))
        for c in compared:
            if c.stopped is None:
                look(c, table, n, rule, rule.levels[n])
        if all(c.stopped for c in compared):
            break
    return perms, ys, reached(pl, rule, compared, len(perms), spent, time.monotonic() - t0)


def reached(
    pl: Plan, rule: Looks, compared: list[Compared], n: int, spent: str, wall_s: float
) -> dict[str, Any]:
    """What the final blocks reached against their plan, and the line that says it."""
    from perflab.compare import precision as pp

    widths = ", ".join(f"{c.name} ±{pp.pct(c.half_width)} ({c.stopped})" for c in compared)
    widest = max((c.half_width for c in compared), default=math.inf)
    rate = pp.per_hour(widest, wall_s)
    line = (
        f"final blocks: {n} of {pl.pairs} planned ({rule.last} at most) in "
        f"{pp.duration(wall_s)}: {widths}; target ±{pp.pct(pl.target)}; {spent}, Bonferroni "
        f"over {len(compared)} set(s) of α = {ALPHA:g}; widest ±{pp.pct(widest)}: "
        f"{pp.per_hour_text(rate)}"
    )
    return {
        "plan": pl.to_dict(),
        "target": pl.target,
        "blocks": n,
        "planned_blocks": pl.pairs,
        "most_blocks": rule.last,
        "levels": {str(k): v for k, v in rule.levels.items()},
        "sets": [
            {
                "set": c.name,
                "stopped": c.stopped,
                "looks": c.looks,
                "half_width": c.half_width if math.isfinite(c.half_width) else None,
            }
            for c in compared
        ],  # fmt: skip
        "wall_s": wall_s,
        "half_width": widest if math.isfinite(widest) else None,
        "half_width_per_hour": rate,
        "spent": spent,
        "line": line,
    }
