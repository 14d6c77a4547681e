"""The fastest set at each level of niceness: the recommended set cut to the level, then
completed with what helps there.

Cutting the recommended set to a level (environment only; + safe config; ...) drops its
costlier members, and with them the state the rest was judged in: a factor the full set
rightly leaves out can make a level's set faster (on the traps truth, one that helps slow
sets but hurts near the optimum). So each lower level gets a **knock-in look** when the
budget allows: runs of the cut set with some of the level's other candidates added (a random
design, ``knockout.knockout_design`` with 1 = added), one OLS of log time on which were
added, and a candidate joins the level's set only if the set is slower without it (Holm over
the level's candidates, one-sided at ``ALPHA``, and beyond compare's 2% threshold) — the
same rule the reduction applies to the recommended set's members.

The candidates tried are those the search's runs lean towards or show clearly costly
(``LEAN_P``, ``HARM_P``; tune/reduce.py ``support``): trying every candidate at every level
would cost more runs than a tune has left, and a factor that does nothing in the search's
runs is the one least likely to help a level.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from perflab.analysis.stats import adjust, t_ppf, t_sf
from perflab.campaign.designs.base import Constraints
from perflab.tune.knockout import (
    ALPHA,
    THRESHOLD,
    Evidence,
    exact_ols,
    knockout_design,
    least_runs,
    robust_fit,
)
from perflab.tune.reduce import level_sets, rank, support

#: Candidates are tried if the search's runs lean towards them (one-sided p of saving time at
#: most LEAN_P) or show them clearly costly (p at least 1 - HARM_P: a factor may cost time
#: only near the recommended set, where the search spent its runs, and save it elsewhere).
LEAN_P, HARM_P = 0.2, 0.01

Sets = list[tuple[str, set[str]]]


def addable(cut: set[str], level: int, cands: list[str], cons: Constraints) -> list[str]:
    """The candidates a level's set may gain: within the level, not in ``cut``, valid with it."""
    return [f for f in cands if rank(f, cons) <= level and f not in cut and cons.ok(cut | {f})]


def plan(
    best: set[str],
    cands: list[str],
    cons: Constraints,
    obs: list[tuple[frozenset[str], float]],
) -> list[tuple[int, set[str], list[str]]]:
    """The knock-in looks worth running: (level, cut set, candidates to try), one per distinct
    cut below the recommended set, at the highest level with that cut (it may try the most)."""
    # in the order of the evidence, never of the names: the design does not depend on them
    lean = [f for f, p in support(obs, cands, cons) if p <= LEAN_P or p >= 1 - HARM_P]
    out: dict[frozenset[str], tuple[int, set[str], list[str]]] = {}
    for i, (_, cut) in enumerate(level_sets(best, cons)):
        if cut == best:
            continue
        allowed = set(addable(cut, i, cands, cons))
        tries = [f for f in lean if f in allowed]
        if tries:
            out[frozenset(cut)] = (i, cut, tries)
    return list(out.values())


def complete(
    best: set[str],
    cands: list[str],
    cons: Constraints,
    obs: list[tuple[frozenset[str], float]],
    measure_sets: Callable[[list[set[str]]], list[float]],
    runs: int,
    rng: np.random.Generator,
) -> tuple[Sets, dict[str, tuple[list[str] | None, list[Evidence]]]]:
    """Each level's set (as ``reduce.level_sets``) with what its knock-in look found faster,
    from at most ``runs`` new runs; and by level, the candidates its look tried (None: no
    look) and the evidence for its additions. Looks are run from the lowest level up while
    the runs last; a level without a look keeps its cut set."""
    levels = level_sets(best, cons)
    found: dict[frozenset[str], tuple[list[str], set[str], list[Evidence]]] = {}
    for _, cut, tries in plan(best, cands, cons, obs):
        n = least_runs(len(tries))
        if n > runs:
            continue  # a level that tries fewer may still fit
        runs -= n
        found[frozenset(cut)] = (tries, *knock_in(cut, tries, cons, measure_sets, n, rng))
    out: Sets = []
    looked: dict[str, tuple[list[str] | None, list[Evidence]]] = {}
    for i, (cat, cut) in enumerate(levels):
        if frozenset(cut) not in found:
            out.append((cat, cut))
            looked[cat] = (None, [])
            continue
        tries, added, ev = found[frozenset(cut)]
        # a look ran at the highest level sharing this cut: a lower level keeps only what
        # lies within it
        keep = {f for f in added if rank(f, cons) <= i}
        out.append((cat, cut | keep))
        looked[cat] = (
            [f for f in tries if rank(f, cons) <= i],
            [e for e in ev if set(e.factors) <= keep],
        )
    return out, looked


def knock_in(
    cut: set[str],
    tries: list[str],
    cons: Constraints,
    measure_sets: Callable[[list[set[str]]], list[float]],
    runs: int,
    rng: np.random.Generator,
) -> tuple[set[str], list[Evidence]]:
    """``runs`` runs of ``cut`` with some of ``tries`` added; returns the candidates the set
    is measurably slower without (and valid together, the fastest first) and their evidence."""
    design = knockout_design(len(tries), runs, rng)
    sets = []
    for row in design:
        chosen = set(cut)
        for j in rng.permutation(np.flatnonzero(row)):  # an exclusive pair: one at random
            if cons.ok(chosen | {tries[j]}):
                chosen.add(tries[j])
        sets.append(chosen)
    ys = measure_sets(sets)
    # a failed run (NaN) has no number: only ok runs enter the fit
    good = [i for i, y in enumerate(ys) if math.isfinite(y) and y > 0]
    sets, ys = [sets[i] for i in good], [ys[i] for i in good]
    if len(ys) <= len(tries) + 1:
        return set(), []
    # the columns are what each run held, not what the design asked for
    x = np.array([[1.0] + [float(f in s) for f in tries] for s in sets])
    fit, n_out = robust_fit(x, np.log(ys))
    df = max(float(fit.df_resid), 1.0)
    gain = -np.asarray(fit.params)[1:]  # log(time without / time with): > 0 when it helps
    se = np.asarray(fit.bse)[1:]
    if exact_ols(fit):  # a deterministic score: the gains are measured, no test to make
        return _exact_knock_in(cut, tries, cons, gain, x, len(ys))
    # a candidate is judged only if its column is not a combination of the others (one the
    # catalog's rules kept out of every run, say)
    rank = np.linalg.matrix_rank(x)
    est = [np.linalg.matrix_rank(np.delete(x, j + 1, 1)) < rank for j in range(len(tries))]
    ok = np.array(est) & np.isfinite(se) & (se > 0)
    p = np.where(ok, t_sf(gain / np.where(ok, se, 1), df), np.nan)
    adjusted, decided = adjust(list(p), "holm", ALPHA)
    q = float(t_ppf(1 - ALPHA, df))
    chosen, evidence = set(cut), []
    for j in np.argsort(-gain):
        f = tries[j]
        if not (ok[j] and decided[j] and gain[j] >= math.log1p(THRESHOLD)):
            continue
        if not cons.ok(chosen | {f}):
            continue
        chosen.add(f)
        r, lo, hi = (math.exp(v) for v in (gain[j], gain[j] - q * se[j], gain[j] + q * se[j]))
        ci = f"{1 - 2 * ALPHA:.0%} CI {lo:.3f}-{hi:.3f}, Holm p {adjusted[j]:.3g}"
        why = f"added: the level's set is slower without it ({r:.3f}x the time, {ci}, "
        why += f"{len(ys)} runs" + (f", {n_out} outlier(s) left out)" if n_out else ")")
        evidence.append(Evidence([f], True, "slower", r, lo, hi, 1 - 2 * ALPHA, len(ys), why))
    return chosen - cut, evidence


def _exact_knock_in(
    cut: set[str], tries: list[str], cons: Constraints, gain: np.ndarray, x: np.ndarray, n: int
) -> tuple[set[str], list[Evidence]]:
    """``knock_in`` on exact data: a candidate is added when the level's set is slower
    without it beyond the threshold in every run (no p, no interval width)."""
    full = np.linalg.matrix_rank(x)
    chosen, evidence = set(cut), []
    for j in np.argsort(-gain):
        f = tries[j]
        aliased = np.linalg.matrix_rank(np.delete(x, j + 1, 1)) == full
        if aliased or gain[j] < math.log1p(THRESHOLD) or not cons.ok(chosen | {f}):
            continue
        chosen.add(f)
        r = math.exp(float(gain[j]))
        why = f"added: the level's set is slower without it ({r:.3f}x the time; exact data: "
        why += f"no test, {n} runs)"
        evidence.append(Evidence([f], True, "slower", r, r, r, None, n, why))
    return chosen - cut, evidence
