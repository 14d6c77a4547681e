"""The best-set search as a pure algorithm: screen → focus → confirm, each stage planned from
the data so far. It never measures anything itself: a ``Measure`` callback runs a stage's sets
(a real campaign, or a synthetic truth in the bench), so the same code serves both.

* screen: a near-orthogonal main-effects design over every candidate treatment, with the base
  set replicated through it (pure error, drift);
* focus: every subset (or a D-optimal fraction with interactions) of the factors still in
  play, the others left off; a pairwise model on log time proposes the candidate;
* confirm: the candidate and its one-factor neighbours, interleaved with the base, tested
  (Welch on log times, Holm); move to a significantly better neighbour while the budget lasts;
* finally the winning set is reduced to what the data support, and blocks of the base and
  each level's set give the measured speed-ups with their intervals (tune/final.py).
"""

from __future__ import annotations

import itertools
import warnings
from typing import Any

import numpy as np
import statsmodels.api as sm

from perflab.campaign.designs.fractional import doptimal
from perflab.tune.final import Measure, Search, TuneResult, repair, subsets
from perflab.tune.speedup import screen_effects

#: How many of the leading factors in play get pairwise terms in the model.
PAIRED = 6
#: At most this many factors are searched over (2^12 subsets).
MAX_POOL = 12


class Tuner(Search):
    """Searches the best treatment set of ``candidates`` within ``budget`` runs."""

    name = "staged"

    def _values(self, s: frozenset[str]) -> np.ndarray:
        return np.array([y for t, y in self.obs if t == s])

    def _rows(self, x: np.ndarray, factors: list[str]) -> list[set[str]]:
        """The valid sets nearest to the rows of a ±1 design matrix over ``factors``."""
        return [
            repair({f for f, v in zip(factors, r, strict=True) if v > 0}, self.cons, self.rng)
            for r in x
        ]

    def _interleave(self, sets: list[set[str]], base_reps: int) -> list[set[str]]:
        order = [sets[i] for i in self.rng.permutation(len(sets))]
        if base_reps:
            slots = np.linspace(0, len(order), base_reps, dtype=int)
            for k, pos in enumerate(slots):
                order.insert(int(pos) + k, set())
        return order

    # --- stages -------------------------------------------------------------------------

    def screen(self, measure: Measure) -> list[Any]:
        k = len(self.cands)
        rows = max(k + 4, int(0.3 * self.budget))
        base_reps = max(3, rows // 8)
        x = doptimal(k, rows - base_reps, interactions=False, rng=self.rng)
        sets = self._rows(x, self.cands)
        self._run(
            self._interleave(sets, base_reps),
            measure,
            "screen",
            f"main effects of {k} candidates ({len(sets)} sets) with the base {base_reps}x",
        )
        if not self.obs:  # every run failed: nothing to screen
            return []
        xs = np.array([[int(f in s) for f in self.cands] for s, _ in self.obs])
        return screen_effects(xs, np.array([y for _, y in self.obs]), self.cands)

    def choose_active(self, effects: list[Any], most: int) -> list[str]:
        """Factors still in play: helpful estimates with p < 0.25, best first; at most two
        levels of one factor, ``most`` in all."""
        helpful = [e for e in effects if e.estimate < 0 and e.p < 0.25]
        per_factor: dict[str, int] = {}
        active: list[str] = []
        for e in sorted(helpful, key=lambda e: e.estimate):
            name = e.name.partition("=")[0]
            if per_factor.get(name, 0) < 2 and len(active) < most:
                per_factor[name] = per_factor.get(name, 0) + 1
                active.append(e.name)
        return active

    def focus(self, active: list[str], measure: Measure, rows: int) -> None:
        valid = subsets(active, self.cons)
        if len(valid) <= rows:
            sets = [valid[i % len(valid)] for i in range(max(rows, len(valid)))]
            how = f"every valid subset of {len(active)} factors ({len(valid)} sets)"
        else:
            x = doptimal(len(active), rows, interactions=True, rng=self.rng)
            sets = self._rows(x, active)
            how = f"a D-optimal fraction with interactions over {len(active)} factors"
        self._run(self._interleave(sets, 0), measure, "focus", how)

    def predict_best(self, active: list[str]) -> tuple[set[str], float]:
        """The model of log time (main effects of every candidate, pairwise terms among the
        first ``PAIRED`` of ``active``) minimised over ``active``'s valid subsets."""
        if not self.obs:  # no ok run: no model, the base stays the candidate
            return set(), float("nan")
        pairs = list(itertools.combinations(active[:PAIRED], 2))
        varied = [f for f in self.cands if 0 < sum(f in s for s, _ in self.obs) < len(self.obs)]

        def row(s: frozenset[str] | set[str]) -> list[float]:
            return [
                1.0,
                *(float(f in s) for f in varied),
                *(float(a in s and b in s) for a, b in pairs),
            ]

        m = np.array([row(s) for s, _ in self.obs])
        with warnings.catch_warnings():  # an unestimable pair is fine: pinv gives it 0
            warnings.simplefilter("ignore")
            fit = sm.OLS(np.log([y for _, y in self.obs]), m).fit(method="pinv")
        valid = subsets(active, self.cons)
        pred = [float(np.asarray(row(s)) @ fit.params) for s in valid]
        i = int(np.argmin(pred))
        return valid[i], float(np.exp(pred[i]))

    def confirm(self, best: set[str], pool: list[str], measure: Measure) -> set[str]:
        """Rounds around the candidate: it twice and each one-factor neighbour once, then
        the pairwise model (all data, log time) moves the candidate to its argmin over the
        pool; until the budget is down to the final pairs (more rounds near the candidate
        sharpen exactly the effects that decide it)."""
        reserve = self.reserved
        while True:
            neigh = [repair(best ^ {f}, self.cons, self.rng, keep=f) for f in pool]
            neigh = [s for s in neigh if s and s != best]
            if self.left - (2 + len(neigh)) < reserve or not neigh:
                break
            self._run(
                self._interleave([set(best), set(best), *neigh], 0),
                measure,
                f"confirm {len(self.stages)}",
                f"the candidate twice and its {len(neigh)} one-factor neighbours",
            )
            best, _ = self.predict_best(pool)
        return best

    def run(self, measure: Measure) -> TuneResult:
        effects = self.screen(measure)
        most = 5 if self.budget < 200 else 7
        active = self.choose_active(effects, most)
        focus_rows = max(8, int(0.25 * self.budget))
        if active and self.budget >= 200 and self.left - focus_rows > 2 * self.pairs:
            self.focus(active, measure, focus_rows)
        best, predicted = self.predict_best(active) if active else (set(), None)
        helpful = [e.name for e in sorted(effects, key=lambda e: e.estimate) if e.estimate < 0]
        pool = list(dict.fromkeys([*active, *helpful]))[:MAX_POOL]
        best = self.confirm(best, pool, measure)
        predicted = self.predict_best(pool)[1] if pool else predicted
        return self.result(
            best, measure, active=active, predicted_us=predicted, screen=[vars(e) for e in effects]
        )
