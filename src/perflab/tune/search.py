"""What every best-set search shares: the stage bookkeeping, the repair of a set to a valid
one, and the final adjacent (base, best) pairs that measure the speed-up."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from perflab.campaign.designs.base import Constraints
from perflab.tune.stats import SpeedUp, paired_speedup

#: Runs the sets (in the given order) and returns the metric (lower is better) of each.
Measure = Callable[[list[list[str]], str, str], list[float]]


@dataclass
class Stage:
    name: str
    reason: str
    runs: int


@dataclass
class TuneResult:
    """The confirmed set, its measured speed-up over the base, and how it was found."""

    best: list[str]
    speedup: SpeedUp
    runs: int
    stages: list[Stage]
    active: list[str]
    predicted_us: float | None = None
    screen: list[dict[str, Any]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "best_set": self.best,
            "measured": vars(self.speedup),
            "predicted_us": self.predicted_us,
            "runs": self.runs,
            "active": self.active,
            "stages": [vars(s) for s in self.stages],
            "screen": self.screen,
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
    """A search within ``budget`` runs over ``candidates``; subclasses define ``run``."""

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
        self.obs: list[tuple[frozenset[str], float]] = []
        self.stages: list[Stage] = []

    @property
    def left(self) -> int:
        return self.budget - len(self.obs)

    def _run(self, sets: list[set[str]], measure: Measure, name: str, reason: str) -> list[float]:
        ys = measure([sorted(s) for s in sets], name, reason)
        self.obs += [(frozenset(s), float(y)) for s, y in zip(sets, ys, strict=True)]
        self.stages.append(Stage(name, reason, len(sets)))
        return [float(y) for y in ys]

    def final(self, best: set[str], measure: Measure) -> SpeedUp:
        """Adjacent (base, best) pairs in random order within each pair: the measured speed-up."""
        n = max(2, min(self.pairs, self.left // 2))
        sets: list[set[str]] = []
        for _ in range(n):
            sets += [set(), set(best)] if self.rng.random() < 0.5 else [set(best), set()]
        ys = self._run(sets, measure, "final", f"{n} adjacent (base, best) pairs")
        base = [y for s, y in zip(sets, ys, strict=True) if not s]
        top = [y for s, y in zip(sets, ys, strict=True) if s]
        if not best:  # the base itself is best: its pairs are base against base
            base, top = ys[0::2], ys[1::2]
        return paired_speedup(np.array(base), np.array(top))

    def run(self, measure: Measure) -> TuneResult:
        raise NotImplementedError
