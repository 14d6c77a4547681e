"""After a search: keep only what the data support, and the fastest set at each level of niceness.

A search returns the set that looked fastest; it can carry factors that do nothing (a lucky
draw kept them) or that slow the run down a little. A user who applies the set turns off
features and patches source for them, so each member has to earn its place:

* **reduction**: the members the search's runs give no evidence for are tried as one group,
  every other member alone. Up to ``LOOKS`` looks (tune/knockout.py) each run a chunk of
  knock-out runs around the set and fit one local model to every run near the set so far
  (the search's near runs too): is the set slower without the group beyond the practical
  threshold? What a look decides is settled (a slower group stays, one shown not slower
  goes; a group that must stay is split into its members), the rest is looked at again with
  the next chunk. A member stays only if it is shown needed. The order depends on the
  evidence and the catalog category (costlier tried first), never on names, so renaming or
  reordering the candidates changes nothing.
* **levels**: the reduced set cut to each category level (environment only; + safe config;
  + source that keeps features; + configuration that disables features; + everything), so
  the final pairs measure what each level alone is worth ("1.9x without disabling anything").
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Iterable
from dataclasses import replace

import numpy as np
import statsmodels.api as sm

from perflab.campaign.designs.base import Constraints
from perflab.factors.catalog import CATEGORIES, DEFAULT_CATEGORY
from perflab.tune.alone import alone
from perflab.tune.either import Pair, both_kinds, targeted
from perflab.tune.interact import interacting, with_products
from perflab.tune.knockout import (
    REACH,
    THRESHOLD,
    Evidence,
    drop_sets,
    least_runs,
    look,
    missing,
)
from perflab.tune.spending import ALPHA, LOOKS, SPLIT_SHARE, spend
from perflab.tune.verdicts import unassessable, unresolved

__all__ = [
    "THRESHOLD",
    "Evidence",
    "level_sets",
    "rank",
    "reduce",
    "shown_needed",
    "support",
    "without",
]

#: Products of members the search shows interact enter the looks' model (tune/interact.py).
INTERACT = True
#: Members the looks did not show needed are tested alone beside the set (tune/alone.py).
ALONE = True
#: Members whose one-sided p of "helps" in the search's runs is above this are tried as one.
WEAK_P = 0.2
#: Members with p at most this are presumed needed: they go only if shown harmless.
STRONG_P = 0.01
#: A split group's look gets this many times the least runs for its members, from the
#: final blocks' spare runs if need be (splitting comes before any other use of runs).
SPLIT_RUNS = 3


def rank(factor: str, cons: Constraints) -> int:
    """How costly a factor is to apply: its category's place in the catalog's nice order."""
    return CATEGORIES.index(cons.category.get(factor, DEFAULT_CATEGORY))


def without(chosen: Iterable[str], drop: Iterable[str], cons: Constraints) -> set[str]:
    """``chosen`` minus ``drop`` and whatever requires a dropped factor (transitively)."""
    out = set(chosen) - set(drop)
    while missing := {a for a, b in cons.requires if a in out and b not in out}:
        out -= missing
    return out


def support(
    obs: list[tuple[frozenset[str], float]], members: list[str], cons: Constraints
) -> list[tuple[str, float]]:
    """Each member's one-sided p of "it saves time" from every run so far (OLS of log time on
    every factor that varied), least supported first: larger p, then costlier category, then
    the smaller estimated saving. Nothing here depends on names or their order."""
    factors = sorted({f for s, _ in obs for f in s})
    x = np.array([[float(f in s) for f in factors] for s, _ in obs]).reshape(len(obs), len(factors))
    varied = [j for j in range(x.shape[1]) if 0 < x[:, j].sum() < len(obs)]
    p = dict.fromkeys(members, 1.0)
    est = dict.fromkeys(members, 0.0)
    if varied and len(obs) > len(varied) + 1:
        m = sm.add_constant(x[:, varied], has_constant="add")
        with warnings.catch_warnings():  # aliased columns: pinv shares them, p may be NaN
            warnings.simplefilter("ignore")
            fit = sm.OLS(np.log([y for _, y in obs]), m).fit(method="pinv")
        for i, j in enumerate(varied):
            f, two_sided, b = factors[j], float(fit.pvalues[i + 1]), float(fit.params[i + 1])
            if f in p and math.isfinite(two_sided):
                # one-sided: a negative coefficient (less time) is the evidence for keeping it
                p[f] = two_sided / 2 if b < 0 else 1 - two_sided / 2
                est[f] = b
    # rounding: the same data in another column order agree to ~1e-15, not to the last bit
    order = sorted(members, key=lambda f: (-round(p[f], 9), -rank(f, cons), round(-est[f], 9)))
    return [(f, p[f]) for f in order]


def reduce(
    best: set[str],
    obs: list[tuple[frozenset[str], float]],
    cons: Constraints,
    measure_sets: Callable[[list[set[str]]], list[float]],
    runs: int,
    rng: np.random.Generator,
    spare: int = 0,
    reach: int = REACH,
) -> tuple[set[str], list[Evidence]]:
    """The members of ``best`` the data do not show unneeded (the fastest set the reduction
    keeps), and the evidence for each, from at most ``runs`` new runs in up to ``LOOKS``
    knock-out looks around the set (tune/knockout.py); ``shown_needed`` cuts it to what was
    shown needed member by member.

    Members the search gave no evidence for (one-sided p above ``WEAK_P``) are first tried as
    one group: a test for each would cost runs and, through Holm, the power to keep the real
    ones. A group shown needed is split into its members for the next look. Splitting comes
    before any other use of runs: when the looks are spent (or the last look found a group
    slower), one more look tests the split members, taking up to ``spare`` runs beyond
    ``runs`` (the final blocks' runs beyond their minimum). It tests only members of groups
    already shown slower (a gate: a group of nulls reaches it only through a false "slower").
    A group still unsplit when no runs remain is "unresolved": each member kept with the
    group, never carrying the group's ratio as its own. Each look gets an even share of the
    runs left, or what makes it testable if that is more."""
    order = support(obs, sorted(best), cons)
    weak = [f for f, p in order if p > WEAK_P]
    if len(weak) in (1, len(order)):  # nothing to group, or no evidence to group by
        weak = []
    p_of = dict(order)
    # the fallback tests' order (knockout.ordered_tests): most supported by the search first
    prior = {f: i for i, (f, _) in enumerate(reversed(order))}
    open_ = leaning(weak, p_of) + [[f] for f, _ in order if f not in weak]
    pairs = interacting(obs, sorted(f for f, p in order if p <= STRONG_P)) if INTERACT else []
    extend = (lambda loc, cols: with_products(loc, cols, pairs)) if pairs else None
    presumed = frozenset(f for f, p in order if p <= STRONG_P)
    seen = list(obs)  # a copy: ``obs`` may be the search's own list, which measuring extends
    start = len(seen)
    current, settled = set(best), []
    # a short budget tests the least supported first: the rest stay, untested, and say so
    fits = [
        m
        for m in range(len(open_) + 1)
        if missing(seen, best, open_[:m], start, None, reach) <= runs
    ]
    for g in open_[max(fits) :]:
        why = f"kept, not tested: {runs} runs test only the {max(fits)} least supported; "
        why += f"the search's runs give it p {p_of[g[0]]:.2g} of saving time"
        settled.append(Evidence(g, True, "untested", reason=why))
    open_ = open_[: max(fits)]
    fixed: list[list[str]] = []  # groups settled by earlier looks: columns, not tested again
    lost = [0]  # runs of the looks that failed
    budget, split = runs, False  # split: open_ holds a slower group's members
    parent: dict[str, Evidence] = {}  # a split member: its group's evidence
    spent = 0.0  # the level the ordinary looks have used (knockout.spend)
    reserve_used = False  # the first split look's share, SPLIT_SHARE of ALPHA
    for k in range(LOOKS + 1):
        used = len(seen) - start + lost[0]
        need = missing(seen, best, open_, start, fixed, reach)
        if split and need > budget - used:
            # splitting is the budget's first call: up to ``spare`` runs beyond ``runs``
            budget = min(runs + spare, used + max(need, 2 * least_runs(len(open_))))
        left = budget - used
        if not open_ or (k and left <= 0) or (k == LOOKS and not split):
            break
        chunk = min(left, max(need, left // max(1, LOOKS - k)))
        last = k >= LOOKS - 1 or chunk == left
        plain = spend(chunk / max(1, runs), spent, k, last)
        alpha = plain + (SPLIT_SHARE * ALPHA if split and not reserve_used else 0.0)
        if alpha <= 1e-9:
            break
        spent, reserve_used = spent + plain, reserve_used or split

        def measure(design: np.ndarray, ref: set[str] = current, g: list = open_) -> list:
            sets = drop_sets(ref, g, design, lambda b, d: without(b, d, cons))
            ys = measure_sets(sets) if sets else []
            got = [(frozenset(s_), float(y)) for s_, y in zip(sets, ys, strict=True)]
            # a failed run (NaN) has no number for the model; it still spent its run
            lost[0] += sum(not (math.isfinite(y) and y > 0) for _, y in got)
            return [(s_, y) for s_, y in got if math.isfinite(y) and y > 0]

        # the model stays around the search's pick: every run so far is near it
        evidence = look(
            best, open_, fixed, seen, measure, chunk, start, presumed, rng, alpha, prior, reach,
            extend,
        )  # fmt: skip
        open_, slower, mixed = [], [], []
        for e in evidence:
            if len(e.factors) > 1 and not last and e.verdict in ("faster", "not slower"):
                mixed.append(e)  # a member that helps may hide behind one that harms
            elif e.verdict in ("faster", "not slower") or (last and not e.kept):
                current = go(current, e, seen, settled, cons)
                fixed.append(e.factors)
            elif e.verdict == "slower" and len(e.factors) > 1:
                slower.append(e)
            elif last or e.verdict == "slower":
                settled.append(e)
                fixed.append(e.factors)
            else:
                open_.append(e.factors)
        used = len(seen) - start + lost[0]
        parts = [[f] for e in slower for f in e.factors]
        split_too = [[f] for e in mixed for f in e.factors]
        wanted = [*open_, *parts, *split_too]
        if mixed and missing(seen, best, wanted, start, fixed, reach) <= runs - used:
            open_ += split_too  # within the reduction's own runs: splitting takes no spare
        else:
            for e in mixed:
                current = go(current, e, seen, settled, cons)
                fixed.append(e.factors)
        parts = [*open_, *([f] for e in slower for f in e.factors)]
        more = missing(seen, best, parts, start, fixed, reach)
        avail = runs + spare - used
        if slower and k < LOOKS and (not last or 0 < more <= avail or (more == 0 < avail)):
            open_ += [[f] for e in slower for f in e.factors]
            parent.update({f: e for e in slower for f in e.factors})
            split = True
            # enough to tell each member's own cost (a 7 % member of a group of 7 at 4 %
            # noise: found in 2 of 8 seeds with the runs left, 7 of 8 with these)
            want = SPLIT_RUNS * least_runs(len(parent))
            budget = max(budget, min(runs + spare, used + want))
        else:  # no runs left to split it: each member is kept with the group, unresolved
            settled += [m for e in slower for m in unresolved(e)]
            fixed += [e.factors for e in slower]
    # what the runs left open: a split member stays with its group, anything else untested
    for g in open_:
        if g[0] in parent:
            settled += [m for m in unresolved(parent[g[0]]) if m.factors == g]
        else:
            why = "kept, not tested: the runs ran out before its look"
            settled.append(Evidence(g, True, "untested", reason=why))
    cut = lambda s_, d: without(s_, d, cons)  # noqa: E731
    avail = runs + spare - (len(seen) - start + lost[0])
    seen += targeted(best, current, settled, seen, start, cut, measure_sets, avail, rng, reach)
    current, settled = either_or(best, current, settled, seen, start, cons, reach)
    # members dropped on their average cost: the set without each alone, at the split share
    # (after the pairs: substitutes both dropped are theirs, one kept as "either")
    level = 0.0 if reserve_used or not ALONE else SPLIT_SHARE * ALPHA
    back, shown = alone(best, current, settled, fixed, seen, start, level, reach, presumed)
    if back and cons.ok(current | set(back)):
        current = current | set(back)
        settled = [next((x for x in shown if x.factors == e.factors), e) for e in settled]
    return without(current, set(), cons), settled


def leaning(weak: list[str], p_of: dict[str, float]) -> list[list[str]]:
    """The weakly supported members as up to three groups, by which way the search's runs
    lean: towards saving time, towards costing it, or no evidence at all (never varied
    apart). A helpful member grouped with a harmful one would cancel in the group's drop."""
    helps = [f for f in weak if p_of[f] <= 0.5]
    harms = [f for f in weak if 0.5 < p_of[f] < 1.0]
    blind = [f for f in weak if p_of[f] >= 1.0]
    return [g for g in (helps, harms, blind) if g]


def either_or(
    best: set[str],
    current: set[str],
    settled: list[Evidence],
    seen: list[tuple[frozenset[str], float]],
    start: int,
    cons: Constraints,
    reach: int = REACH,
) -> tuple[set[str], list[Evidence]]:
    """Members dropped alone whose pair the set is slower without (tune/either.py): the
    nicer of each such pair comes back as "either A or B", shown needed as an alternative.
    Both kinds of pair are one Holm family at the pairs' share of the 5 % (tune/spending.py)."""
    single = [e for e in settled if len(e.factors) == 1]
    slower = [e.factors[0] for e in single if e.verdict == "slower"]
    dropped = [e.factors[0] for e in single if not e.kept and e.verdict != "alternative"]
    if len(slower) < 2 and len(dropped) < 2:
        return current, settled
    subs, found = both_kinds(seen, best, sorted(best), slower, dropped, start, reach)
    current, settled = _substitutes(current, settled, subs, cons)
    alone = {e.factors[0]: e.ratio or 1.0 for e in settled if len(e.factors) == 1}
    by = {e.factors[0]: i for i, e in enumerate(settled) if len(e.factors) == 1}
    taken: set[str] = set()
    for q in found:
        if {q.a, q.b} & taken:
            continue
        # the nicer (cheaper category) of the two; at a tie the one costlier to drop alone
        nicer, other = sorted((q.a, q.b), key=lambda f: (rank(f, cons), -round(alone[f], 9)))
        if not cons.ok(current | {nicer}):
            continue
        taken |= {q.a, q.b}
        current = current | {nicer}
        ci = f"{q.confidence:.1%} CI {q.ci_low:.3f}-{q.ci_high:.3f}, Holm p {q.p:.3g}"
        why = (
            f"kept as either {nicer} or {other}: the set is slower without both ({q.ratio:.3f}x "
            f"the time, {ci}, {q.runs} runs, {q.both} without both) but not without either "
            f"alone; {nicer} is the nicer"
        )
        settled[by[nicer]] = Evidence(
            [nicer], True, "either", q.ratio, q.ci_low, q.ci_high, q.confidence, q.runs, why,
            group=[nicer, other],
        )  # fmt: skip
        old = settled[by[other]]
        settled[by[other]] = replace(old, reason=old.reason + f"; either it or {nicer} is needed")
    return current, settled


def _substitutes(
    current: set[str], settled: list[Evidence], found: list[Pair], cons: Constraints
) -> tuple[set[str], list[Evidence]]:
    """Members each shown needed that ``found`` calls substitutes (tune/either.py: the set
    is slower without both, not without either alone): the nicer stays as "either A or B",
    the other leaves the set as its ``alternative`` (not needed beside the nicer)."""
    by = {e.factors[0]: i for i, e in enumerate(settled) if len(e.factors) == 1}
    ratio = {f: settled[i].ratio or 1.0 for f, i in by.items()}
    taken: set[str] = set()
    for q in found:
        if {q.a, q.b} & taken:
            continue
        nicer, other = sorted((q.a, q.b), key=lambda f: (rank(f, cons), -round(ratio[f], 9)))
        if dict(zip((q.a, q.b), q.alone, strict=True))[other] >= math.log1p(THRESHOLD):
            nicer, other = other, nicer  # the other is needed beside the nicer: it stays
        if not cons.ok(without(current, {other}, cons) | {nicer}):
            continue
        taken |= {q.a, q.b}
        current = without(current, {other}, cons)
        ci = f"{q.confidence:.1%} CI {q.ci_low:.3f}-{q.ci_high:.3f}, Holm p {q.p:.3g}"
        said = (
            f"the set is slower without both ({q.ratio:.3f}x the time, {ci}, {q.runs} runs, "
            f"{q.both} without both) but, with their own term in the model, not without either "
            f"alone: either is enough"
        )
        settled[by[nicer]] = replace(
            settled[by[nicer]], verdict="either", group=[nicer, other],
            reason=f"kept as either {nicer} or {other}: {said}; {nicer} is the nicer",
        )  # fmt: skip
        settled[by[other]] = replace(
            settled[by[other]], kept=False, verdict="alternative", group=[nicer, other],
            reason=f"an alternative to {nicer}, not needed beside it: {said}",
        )  # fmt: skip
    return current, settled


def go(
    current: set[str],
    e: Evidence,
    seen: list[tuple[frozenset[str], float]],
    settled: list[Evidence],
    cons: Constraints,
) -> set[str]:
    """A group the last look would drop: it goes, unless it has several members that were
    never varied apart (in no run was one of them without the others): then its drop cannot
    tell members that do nothing from members that cancel (one helps, another harms), and
    each is kept, "unassessable", beside the recommended set with no claim of its own."""
    together = all(len(s & set(e.factors)) in (0, len(e.factors)) for s, _ in seen)
    if len(e.factors) > 1 and together:
        settled += unassessable(e)
        return current
    settled.append(e)
    return without(current, e.factors, cons)


def shown_needed(kept: set[str], evidence: list[Evidence], cons: Constraints) -> set[str]:
    """The members of ``kept`` shown needed member by member (a look found the set slower
    without it alone), with what they require: the recommended set."""
    shown = {
        e.factors[0]
        for e in evidence
        if e.kept and e.verdict in ("slower", "either") and len(e.factors) == 1
    }
    out = shown & kept
    while more := {b for a, b in cons.requires if a in out and b in kept and b not in out}:
        out |= more
    return out


def level_sets(best: set[str], cons: Constraints) -> list[tuple[str, set[str]]]:
    """``best`` cut to each category level: (the costliest category allowed, the set)."""
    return [
        (cat, without(best, {f for f in best if rank(f, cons) > i}, cons))
        for i, cat in enumerate(CATEGORIES)
    ]
