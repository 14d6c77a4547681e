"""What every best-set search shares: the stage bookkeeping, the repair of a set to a valid
one, the reduction of the winning set to what the data support (tune/reduce.py), and the
final blocks that measure each level's speed-up over the base."""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from perflab.analysis.stats import bonferroni_level
from perflab.campaign.designs.base import Constraints
from perflab.tune.knockout import FAR, REACH, resolve_runs, shortfall
from perflab.tune.levels import complete
from perflab.tune.precise import Compared, FinalPlan, by_block, run_blocks
from perflab.tune.reduce import Evidence, level_sets, reduce, shown_needed
from perflab.tune.speedup import SpeedUp, paired_speedup

#: Runs the sets (in the given order) and returns the metric (lower is better) of each.
Measure = Callable[[list[list[str]], str, str], list[float]]
#: Share of the budget kept for the reduction (more if the search left more), at least this many.
REDUCE_SHARE, REDUCE_MIN = 0.2, 16
#: The reduction takes runs from the final blocks (down to MIN_BLOCKS) until it has this many.
REDUCE_WANT = 32
#: Share of the budget the levels' knock-in looks (tune/levels.py) may take.
LEVEL_SHARE = 0.1
#: The final stage has at least this many blocks (pairs per set) when the budget is short.
MIN_BLOCKS = 3
#: Runs per candidate at which the recommended set is usually clean (every member shown
#: needed, bench/best_set.py, docs/tune.md). Below it the budget is short: the level sets are
#: not measured (their columns in the final blocks and their knock-in looks go to the
#: reduction) and the search re-measures no finalists; the reduction re-tests its pick anyway.
CLEAN_RUNS_PER_CANDIDATE = 15


@dataclass
class Stage:
    name: str
    reason: str
    runs: int


@dataclass
class TuneResult:
    """The recommended set (the search's pick reduced to the members shown needed, each by
    its own knock-out), its measured speed-up over the base, each level's set and speed-up,
    and how it was found; ``fastest`` is the set the reduction kept (the recommended set plus
    the members the budget could not resolve), with its own measured speed-up if it differs."""

    best: list[str]
    speedup: SpeedUp | None  # None: not measured (the base or the set failed), see why
    runs: int
    stages: list[Stage]
    active: list[str]
    predicted_us: float | None = None
    screen: list[dict[str, Any]] = field(default_factory=list)
    searched: list[str] = field(default_factory=list)
    evidence: list[Evidence] = field(default_factory=list)
    levels: list[dict[str, Any]] = field(default_factory=list)
    why: str = ""  # why ``speedup`` is None
    fastest: list[str] = field(default_factory=list)
    fastest_speedup: SpeedUp | None = None
    precision: dict[str, Any] | None = None  # tune --precision: what the final blocks reached

    def to_dict(self) -> dict[str, Any]:
        return {
            "best_set": self.best,
            "measured": vars(self.speedup) if self.speedup else None,
            "measured_why": self.why or None,
            "predicted_us": self.predicted_us,
            "runs": self.runs,
            "active": self.active,
            "stages": [vars(s) for s in self.stages],
            "screen": self.screen,
            "searched_set": self.searched,
            "evidence": [e.to_dict() for e in self.evidence],
            "dropped": sorted(f for e in self.evidence if not e.kept for f in e.factors),
            # liked by the search, kept by the reduction for want of runs (untested, too few
            # runs to tell, only with a slower group): not in the recommended set
            "not_shown_needed": sorted(set(self.fastest) - set(self.best)),
            "unresolved": [
                {
                    "factor": f,
                    "verdict": e.verdict,
                    # a group judged as one: its figures are the group's, never the member's
                    "group": e.group or (e.factors if len(e.factors) > 1 else None),
                    "runs_to_resolve": resolve_runs(e, self.evidence),
                    "reason": e.reason
                    if len(e.factors) == 1
                    else f"kept with {{{', '.join(e.factors)}}}, not resolved apart: {e.reason}",
                }
                for e in self.evidence
                if e.kept
                for f in e.factors
                if f in set(self.fastest) - set(self.best)
            ],  # fmt: skip
            # substitutes: the set keeps the nicer, the other would do instead (tune/either.py)
            "alternatives": [
                {"factor": e.factors[0], "instead_of": (e.group or [""])[0], "reason": e.reason}
                for e in self.evidence
                if e.verdict == "alternative"
            ],
            "fastest_set": self.fastest,
            "fastest_measured": vars(self.fastest_speedup) if self.fastest_speedup else None,
            "more_runs_estimate": shortfall(self.evidence),
            "levels": self.levels,
            **({"precision": self.precision} if self.precision else {}),
        }


def subsets(factors: list[str], cons: Constraints) -> list[set[str]]:
    """Every valid subset of ``factors``."""
    every = (set(c) for r in range(len(factors) + 1) for c in itertools.combinations(factors, r))
    return [s for s in every if cons.ok(s)]


def repair(
    chosen: set[str], cons: Constraints, rng: np.random.Generator, keep: str = ""
) -> set[str]:
    """The nearest valid set: drop one side of each conflict (never ``keep``) at random, then
    add what ``requires`` asks for (dropping the asker when that is impossible)."""
    out = set(chosen)
    for a, b in sorted(cons.conflicts):
        if a in out and b in out:
            drop = b if a == keep else a if b == keep else (a if rng.random() < 0.5 else b)
            out.discard(drop)
    for a, b in sorted(cons.requires):
        if a in out and b not in out:
            out.add(b)
            if not cons.ok(out):
                out.discard(b)
                out.discard(a)
    return out if cons.ok(out) else set()


class Search:
    """A search within ``budget`` runs over ``candidates``; subclasses define ``run``.

    A search kind is one module in ``tune/searches/`` registering its class in ``SEARCHES``
    under ``name`` (``perflab tune --search NAME``)."""

    name: ClassVar[str] = ""
    #: ``tune --precision``: the final blocks' plan (None: --pairs blocks), and what they
    #: reached (the result's ``precision``)
    precision: FinalPlan | None = None
    reached: dict[str, Any] | None = None

    def __init__(
        self,
        candidates: list[str],
        cons: Constraints,
        budget: int,
        seed: int = 0,
        confirm_pairs: int = 8,
    ) -> None:
        self.cands, self.cons, self.budget = list(candidates), cons, budget
        self.seed, self.pairs = seed, confirm_pairs
        self.rng = np.random.default_rng(seed)
        self.obs: list[tuple[frozenset[str], float]] = []  # the ok runs only
        self.spent = 0  # runs made, failed ones included
        self.stages: list[Stage] = []

    @property
    def short(self) -> bool:
        """Whether the budget is below ``CLEAN_RUNS_PER_CANDIDATE`` runs per candidate."""
        return self.budget < CLEAN_RUNS_PER_CANDIDATE * len(self.cands)

    @property
    def left(self) -> int:
        return self.budget - self.spent

    def _run(self, sets: list[set[str]], measure: Measure, name: str, reason: str) -> list[float]:
        """Run ``sets``; the values in order, NaN for a failed run. Only ok runs join
        ``obs``: a failed run has no number, and every model of the search reads ``obs``."""
        ys = [float(y) for y in measure([sorted(s) for s in sets], name, reason)]
        self.obs += [(frozenset(s), y) for s, y in zip(sets, ys, strict=True) if ok(y)]
        self.spent += len(sets)
        self.stages.append(Stage(name, reason, len(sets)))
        return ys

    @property
    def reserved(self) -> int:
        """Runs a search leaves for the reduction and the final blocks."""
        blocks = min(self.pairs, max(MIN_BLOCKS, self.budget // 10))
        return max(REDUCE_MIN, round(REDUCE_SHARE * self.budget)) + 2 * blocks

    @property
    def search_runs(self) -> int:
        """Runs the search itself may spend (the budget less what every later step needs)."""
        return self.budget - self.reserved

    def result(self, searched: set[str], measure: Measure, **found: Any) -> TuneResult:
        """Reduce the search's pick, then measure it and its level sets against the base."""

        def knockout(sets: list[set[str]]) -> list[float]:
            why = f"{len(sets)} runs of the set with some of its members dropped"
            return self._run(sets, measure, "reduce", why)

        def knock_in(sets: list[set[str]]) -> list[float]:
            why = f"{len(sets)} runs of a level's set with some of its candidates added"
            return self._run(sets, measure, "levels", why)

        # the final blocks hold the base and each level's set: they get their pairs first,
        # down to MIN_BLOCKS where the reduction would otherwise get less than REDUCE_WANT;
        # then the levels' knock-in looks take from the final blocks, down to half of --pairs
        # and up to LEVEL_SHARE of the budget (a clean set comes first, a level's set second;
        # 3 pairs on real HTEX left every step between levels within its noise)
        # a short budget measures no level set but the recommended one (at 100 runs for 20
        # candidates the levels' 3-run columns took a third of what the reduction needs)
        cuts = {frozenset(s) for _, s in level_sets(searched, self.cons) if s}
        block = 3 if self.short else 1 + max(1, len(cuts))  # short: base, set, fastest
        runs = max(self.left - block * self.pairs, min(REDUCE_WANT, self.left - block * MIN_BLOCKS))
        # splitting a slower group comes first: it may take the final blocks down to their
        # minimum (one more column: the fastest set, if it differs from the recommended one)
        spare = max(0, self.left - (block + 1) * MIN_BLOCKS - max(runs, 0))
        # a short budget borrows every search run whose groups are whole (more runs, less
        # locality); a larger one only those near the pick (knockout.REACH, FAR)
        reach = FAR if self.short else REACH
        kept, evidence = reduce(
            searched, self.obs, self.cons, knockout, max(runs, 0), self.rng, spare, reach
        )
        best = shown_needed(kept, evidence, self.cons)
        looks = min(self.level_share, self.left - block * max(MIN_BLOCKS, self.pairs // 2))
        looks = 0 if self.short else looks
        sets, looked = complete(best, self.cands, self.cons, self.obs, knock_in, looks, self.rng)
        shown = [(c, s) for c, s in sets if s == best or not s] if self.short else sets
        speedup, levels, why, fast = self.final(best, shown, measure, kept)
        levels = unmeasured(sets, levels)
        for lv in levels:
            tried, added = looked[lv["level"]]
            lv.update(tried=tried, added=[e.to_dict() for e in added])
        return TuneResult(
            sorted(best),
            speedup,
            self.spent,
            self.stages,
            searched=sorted(searched),
            evidence=evidence,
            levels=levels,
            why=why,
            fastest=sorted(kept),
            fastest_speedup=fast,
            precision=self.reached,
            **{"active": [], **found},
        )

    @property
    def level_share(self) -> int:
        """Runs the levels' knock-in looks may take at most."""
        return round(LEVEL_SHARE * self.budget)

    def final(
        self,
        best: set[str],
        levels: list[tuple[str, set[str]]],
        measure: Measure,
        fastest: set[str] | None = None,
    ) -> tuple[SpeedUp | None, list[dict[str, Any]], str, SpeedUp | None]:
        """Blocks of the base and each distinct level set in random order: each set's speed-up
        from its block-paired runs (pairing cancels the machine's slow drift); a block where
        either run failed pairs nothing. Returns ``best``'s speed-up (None, and why, when
        fewer than 2 pairs were measured), the levels, and ``fastest``'s speed-up (measured
        in the same blocks when it differs from ``best``)."""
        # best is always one of them: when it is empty, its pairs are base against base
        fast = frozenset(fastest if fastest is not None else best)
        distinct = list(
            dict.fromkeys([*(frozenset(s) for _, s in levels if s), frozenset(best), fast])
        )
        block = [frozenset(), *distinct]
        if self.precision is not None:  # sized from the measured variance, stopped when known
            compared = [Compared("recommended set", 1 + distinct.index(frozenset(best)))]
            if fast != frozenset(best):
                compared.append(Compared("fastest set", 1 + distinct.index(fast)))
            perms, ys, self.reached = run_blocks(
                lambda sets, why: self._run(sets, measure, "final", why),
                block, compared, self.precision, self.rng,
            )  # fmt: skip
        else:
            n = max(2, min(self.pairs, self.left // len(block)))  # 2: what a t interval needs
            perms = [self.rng.permutation(len(block)) for _ in range(n)]
            sets = [set(block[i]) for p in perms for i in p]
            ys = self._run(
                sets, measure, "final",
                f"{n} blocks of the base and {len(distinct)} set(s) in random order",
            )  # fmt: skip
        by_pos = by_block(perms, ys, len(block))
        speed = {s: measured(by_pos[:, 0], by_pos[:, i + 1]) for i, s in enumerate(distinct)}
        out = [
            {"level": cat, "set": sorted(s), **_measured(speed[frozenset(s)] if s else None)}
            for cat, s in levels
        ]
        # what each costlier level gains over the last nicer one, in the same blocks: a user
        # takes the nicer set when the costlier is not measurably faster (Bonferroni over the
        # steps, so every "gain" of the list holds at once at 95%)
        steps = [j for j, (_, s) in enumerate(levels) if s and (j == 0 or s != levels[j - 1][1])]
        conf = 1 - bonferroni_level(0.05, len(steps) - 1)
        col = {s: i + 1 for i, s in enumerate(distinct)}
        for i, j in zip(steps, steps[1:], strict=False):
            a, b = col[frozenset(levels[i][1])], col[frozenset(levels[j][1])]
            gain, _ = measured(by_pos[:, a], by_pos[:, b], conf)
            if gain is not None:
                out[j]["over_nicer"] = {"level": levels[i][0], "confidence": conf, **vars(gain)}
        best_speed, why = speed[frozenset(best)]
        return best_speed, out, why, speed[fast][0] if fast != frozenset(best) else None

    def run(self, measure: Measure) -> TuneResult:
        raise NotImplementedError


def ok(y: float) -> bool:
    """Whether a run's value is a measurement (a failed run is NaN)."""
    return math.isfinite(y) and y > 0


def measured(
    base: np.ndarray, other: np.ndarray, level: float = 0.95
) -> tuple[SpeedUp | None, str]:
    """``paired_speedup`` of the blocks where both runs are ok; (None, why) with fewer than
    the 2 pairs a t interval needs: a failed run never becomes a number."""
    good = np.array([ok(a) and ok(b) for a, b in zip(base, other, strict=True)], bool)
    if good.sum() >= 2:
        return paired_speedup(base[good], other[good], level), ""
    n = len(base)
    bad_base = sum(not ok(v) for v in base)
    bad_other = sum(not ok(v) for v in other)
    if bad_base:
        why = f"the base set failed in {bad_base} of {n} runs"
    elif bad_other:
        why = f"the set failed in {bad_other} of {n} runs"
    else:
        why = f"{n} pairs: a t interval needs 2"
    return None, why


def unmeasured(
    sets: list[tuple[str, set[str]]], levels: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """Every level of ``sets``: its measured entry from ``levels`` where the final blocks held
    it, else its set marked not measured (a short budget's runs went to the reduction)."""
    by_level = {lv["level"]: lv for lv in levels}
    why = "not measured: a short budget's runs went to the reduction (give a larger --budget)"
    return [
        by_level.get(cat, {"level": cat, "set": sorted(s), "measured": None, "measured_why": why})
        for cat, s in sets
    ]


def _measured(found: tuple[SpeedUp | None, str] | None) -> dict[str, Any]:
    speed, why = found or (None, "")
    return {"measured": vars(speed) if speed else None, "measured_why": why or None}
