"""Model-free search with optuna's TPE sampler, ending like the staged search: the best
candidates re-measured side by side, the winner reduced, then the measured speed-ups.

Each factor is one categorical parameter: off, or on (or one of its levels); a set that breaks
a catalog conflict or requirement is repaired to the nearest valid one before it runs. Trials
are asked in batches so each batch is one stage (one campaign) of the tune.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from perflab.tune.final import Measure, Search, TuneResult, ok, repair

#: Trials asked (and measured) together as one stage.
BATCH = 10
#: Distinct best trials re-measured side by side before the final pairs.
FINALISTS = 3
#: The search stops early when this many trials in a row bring no trial faster than the best
#: before them by more than compare's practical threshold: the runs left go to the reduction.
PATIENCE, GAIN = 40, 0.02
#: ... but not before this share of the budget (TPE's first trials are its random start),
#: and never after MAX_SEARCH of it: the reduction needs runs to tell members apart.
MIN_SEARCH, MAX_SEARCH = 0.5, 0.6


class OptunaSearch(Search):
    """TPE over the candidates within ``budget`` runs, reserving the confirmation runs."""

    name = "optuna"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.by_factor: dict[str, list[str]] = {}
        for c in self.cands:
            self.by_factor.setdefault(c.partition("=")[0], []).append(c)

    def run(self, measure: Measure) -> TuneResult:
        import optuna

        optuna.logging.set_verbosity(optuna.logging.WARNING)
        study = optuna.create_study(sampler=optuna.samplers.TPESampler(seed=self.seed))
        reserve = self.budget - self.search_runs
        tried: list[tuple[frozenset[str], float]] = []
        while self.left - reserve > 0 and not self._plateau(tried):
            n = min(BATCH, self.left - reserve)
            trials = [study.ask() for _ in range(n)]
            sets = [self._suggest(t) for t in trials]
            ys = self._run(sets, measure, f"search {len(self.stages) + 1}", f"{n} TPE trials")
            for t, s, y in zip(trials, sets, ys, strict=True):
                if not ok(y):  # a failed run: TPE learns to avoid it, with no number
                    study.tell(t, state=optuna.trial.TrialState.FAIL)
                    continue
                study.tell(t, float(np.log(y)))
                tried.append((frozenset(s), y))
        best = self._finalists(tried, measure)
        return self.result(best, measure)

    @property
    def search_runs(self) -> int:
        """The trials: the budget less the finalists' runs and what the steps after need."""
        return super().search_runs - (0 if self.short else FINALISTS * 3)

    def _plateau(self, tried: list[tuple[frozenset[str], float]]) -> bool:
        """Whether the last ``PATIENCE`` trials found nothing faster than the best before them
        by more than ``GAIN`` (after ``MIN_SEARCH`` of the budget)."""
        if len(tried) >= MAX_SEARCH * self.budget:
            return True
        if len(tried) < max(MIN_SEARCH * self.budget, 2 * PATIENCE):
            return False
        before = min(y for _, y in tried[:-PATIENCE])
        return min(y for _, y in tried[-PATIENCE:]) > before * (1 - GAIN)

    def _suggest(self, trial: object) -> set[str]:
        chosen = set()
        for name, options in self.by_factor.items():
            pick = trial.suggest_categorical(name, ["-", *options])  # type: ignore[attr-defined]
            if pick != "-":
                chosen.add(pick)
        return repair(chosen, self.cons, self.rng)

    def _finalists(self, tried: list[tuple[frozenset[str], float]], measure: Measure) -> set[str]:
        """The best few distinct sets measured three times each, interleaved; best mean wins
        (one lucky run does not pick the set)."""
        ranked: list[frozenset[str]] = list(
            dict.fromkeys(s for s, _ in sorted(tried, key=lambda t: t[1]))
        )[:FINALISTS]
        if self.short:  # the reduction re-tests the pick: its runs tell more than finalists'
            ranked = ranked[:1]
        if len(ranked) < 2:
            return set(ranked[0]) if ranked else set()
        sets = [set(s) for s in ranked for _ in range(3)]
        order = [sets[i] for i in self.rng.permutation(len(sets))]
        ys = self._run(order, measure, "finalists", f"the best {len(ranked)} sets, 3x each")
        # a finalist whose runs all failed ranks last (inf stays inside the choice)
        means = [
            float(np.mean(v)) if (v := [y for t, y in zip(order, ys, strict=True) if t == s
                                        and ok(y)]) else math.inf
            for s in ranked
        ]  # fmt: skip
        return set(ranked[int(np.argmin(means))])
