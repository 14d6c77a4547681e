"""After a search: keep only what the data support, and the fastest set at each level of niceness.

A search returns the set that looked fastest; it can carry factors that do nothing (a lucky
draw kept them) or that slow the run down a little. A user who applies the set turns off
features and patches source for them, so each member has to earn its place:

* **reduction**: the winning set's members are tried without, least evidence first. Members
  the runs so far give no evidence for are first dropped together (one test); where that is
  measurably slower, and for every other member, one at a time. Each test runs the set with
  and without the member(s) in adjacent pairs and asks compare's own sequential question
  (``perflab.compare.stats``: looks at 3 and 6 pairs, the levels adding up to alpha): is the
  set without them slower beyond the practical threshold? A member stays only if it is.
  The order depends on the evidence and the catalog category (costlier tried first), never
  on names, so renaming or reordering the candidates changes nothing.
* **levels**: the reduced set cut to each category level (environment only; + safe config;
  + source that keeps features; + configuration that disables features; + everything), so
  the final pairs measure what each level alone is worth ("1.9x without disabling anything").
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import statsmodels.api as sm
from scipy import stats

from perflab.analysis.claims import adjust
from perflab.campaign.designs.base import Constraints
from perflab.factors.catalog import CATEGORIES, DEFAULT_CATEGORY

#: Dropping must make the set slower by more than this for a member to stay (compare's rule).
THRESHOLD = 0.02
#: Family-wise level of the drop tests (Holm over the members).
ALPHA = 0.05
#: Members whose one-sided p of "helps" in the search's runs is above this are tried as one.
WEAK_P = 0.2
#: Members with p at most this are presumed needed: they go only if shown harmless.
STRONG_P = 0.01
#: Each knock-out run drops each member with this probability (near the set: state-dependent
#: factors are judged where the set is, not in much slower sets).
DROP_P = 0.25


@dataclass
class Evidence:
    """One drop test: the set without ``factors`` against the set with them.

    ``ratio`` is time without ÷ time with (above 1: dropping is slower), with its interval at
    ``confidence``, from ``runs`` runs; ``verdict`` says what the set is without them:
    "slower" (significant, Holm, and beyond the threshold), "faster", "not slower" (the
    interval ends below the threshold), "inconclusive", or "untested"."""

    factors: list[str]
    kept: bool
    verdict: str
    ratio: float | None = None
    ci_low: float | None = None
    ci_high: float | None = None
    confidence: float | None = None
    runs: int = 0
    reason: str = ""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


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


def least_runs(m: int) -> int:
    """Runs a knock-out round of ``m`` groups needs. With fewer, a 10% drop cost at 4% noise
    is missed about as often as found (bench/best_set.py), and a member dropped for want of
    power costs the user more than one kept and marked untested."""
    return 2 * m + 8


def knockout_design(m: int, runs: int, rng: np.random.Generator) -> np.ndarray:
    """``runs`` rows over ``m`` members, 1 = dropped: about one run in five drops nothing, the
    others each member with probability ``DROP_P``; the best of a few random draws by
    D-criterion, every member dropped in some runs and kept in others."""
    best, best_det = np.zeros((runs, m)), -np.inf
    for _ in range(64):
        x = (rng.random((runs, m)) < DROP_P).astype(float)
        x[rng.random(runs) < 0.2] = 0
        if not ((x.sum(axis=0) > 0) & (x.sum(axis=0) < runs)).all():
            continue
        m1 = np.hstack([np.ones((runs, 1)), x])
        det = float(np.linalg.slogdet(m1.T @ m1)[1])
        if det > best_det:
            best, best_det = x, det
    return best


def reduce(
    best: set[str],
    obs: list[tuple[frozenset[str], float]],
    cons: Constraints,
    measure_sets: Callable[[list[set[str]]], list[float]],
    runs: int,
    rng: np.random.Generator,
) -> tuple[set[str], list[Evidence]]:
    """The members of ``best`` the data support, and the evidence for each, from at most
    ``runs`` runs of knock-out designs around ``best`` (``knockout``).

    Members the search gave no evidence for (one-sided p above ``WEAK_P``) are first tried as
    one group: a test for each would cost runs and, through Holm, the power to keep the real
    ones. A group that must stay is split into its members in a second round, if runs remain
    (else its members stay, untested)."""
    order = support(obs, sorted(best), cons)
    weak = [f for f, p in order if p > WEAK_P]
    if len(weak) in (1, len(order)):  # nothing to group, or no evidence to group by
        weak = []
    groups = [[f] for f, _ in order if f not in weak] + ([weak] if weak else [])
    seen = list(obs)  # a copy: ``obs`` may be the search's own list, which measuring extends
    start = len(seen)
    presumed = frozenset(f for f, p in order if p <= STRONG_P)
    # the first round gets every run: a group is split only if it must stay and runs remain
    current, evidence = knockout(best, groups, seen, cons, measure_sets, runs, rng, presumed)
    left = runs - (len(seen) - start)
    for g in [e.factors for e in evidence if e.kept and len(e.factors) > 1]:
        evidence = [e for e in evidence if e.factors != g]
        singles = [[f] for f in g]
        current, more = knockout(current, singles, seen, cons, measure_sets, left, rng, presumed)
        left = runs - (len(seen) - start)
        evidence += more
    return current, evidence


def knockout(
    best: set[str],
    groups: list[list[str]],
    seen: list[tuple[frozenset[str], float]],
    cons: Constraints,
    measure_sets: Callable[[list[set[str]]], list[float]],
    runs: int,
    rng: np.random.Generator,
    presumed: frozenset[str] = frozenset(),
) -> tuple[set[str], list[Evidence]]:
    """One knock-out round: ``runs`` runs of ``best`` with some ``groups`` dropped
    (``knockout_design``), plus the runs in ``seen`` of the set or the set without one group;
    OLS of log time on which groups each run dropped gives every group's drop cost (time
    without ÷ with) with its t interval. A group stays if that cost is significant (one-sided,
    Holm over the groups at ``ALPHA``) and beyond the practical ``THRESHOLD`` (compare's
    rule), or, ``presumed`` needed by the search, while the knock-out cannot tell. The new runs
    are appended to ``seen``."""
    m = len(groups)
    if m == 0:
        return set(best), []
    if runs < least_runs(m):
        why = f"kept, not tested: {runs} runs left, a knock-out of {m} needs {least_runs(m)}"
        return set(best), [Evidence(g, True, "untested", reason=why) for g in groups]
    design = knockout_design(m, runs, rng)
    sets = [without(best, {f for j in np.flatnonzero(r) for f in groups[j]}, cons) for r in design]
    ys = list(measure_sets(sets))
    # earlier runs of the set, or of the set without one group, are knock-out runs too
    close = {frozenset(best), *(frozenset(without(best, g, cons)) for g in groups)}
    near = [(s_, y) for s_, y in seen if s_ in close]
    seen += [(frozenset(s_), y) for s_, y in zip(sets, ys, strict=True)]
    sets += [set(s_) for s_, _ in near]
    ys += [y for _, y in near]
    x = np.array([[float(not set(g) <= s_) for g in groups] for s_ in sets])
    fit, n_out = _fit(sm.add_constant(x, has_constant="add"), np.log(ys))
    cost, se, df = np.asarray(fit.params)[1:], np.asarray(fit.bse)[1:], float(fit.df_resid)
    ok = np.isfinite(se) & (se > 0) & (df > 0)
    p = np.where(ok, stats.t.sf(cost / np.where(ok, se, 1), max(df, 1)), np.nan)
    adjusted, decided = adjust(list(p), "holm", ALPHA)
    adj, sig = np.array(adjusted), np.array(decided)
    q = float(stats.t.ppf(0.975, max(df, 1)))
    bound = math.log1p(THRESHOLD)
    kept_set, evidence = set(best), []
    for j, g in enumerate(groups):
        if not ok[j]:
            why = "kept, untested: its drop is aliased with another's in the knock-out runs"
            evidence.append(Evidence(g, True, "untested", reason=why))
            continue
        lo, hi = cost[j] - q * se[j], cost[j] + q * se[j]
        if sig[j] and cost[j] >= bound:
            verdict = "slower"
        elif hi < 0:
            verdict = "faster"
        elif hi <= bound:  # dropping is shown to cost less than the threshold
            verdict = "not slower"
        else:
            verdict = "inconclusive"
        # what the search found helpful stays unless shown harmless; the rest must be shown needed
        kept = verdict == "slower" or (verdict == "inconclusive" and set(g) <= presumed)
        r, lo_r, hi_r = math.exp(cost[j]), math.exp(lo), math.exp(hi)
        why = _reason(kept, verdict, r, lo_r, hi_r, float(adj[j]), len(ys), n_out)
        evidence.append(Evidence(g, kept, verdict, r, lo_r, hi_r, 0.95, len(ys), why))
        if not kept:
            kept_set -= set(g)
    return without(kept_set, set(), cons), evidence


def _fit(m: np.ndarray, y: np.ndarray) -> tuple[Any, int]:
    """OLS of ``y`` on ``m`` without the runs its outlier test (externally studentized
    residuals, Bonferroni at 5 %) rejects: one run slowed 2x by a neighbour must not keep a
    factor. Returns the fit and how many runs were left out."""
    keep = np.ones(len(y), bool)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit = sm.OLS(y, m).fit()
        if fit.df_resid > 2:
            out = np.asarray(fit.outlier_test(method="bonf", alpha=0.05))[:, 2] < 0.05
            if out.any() and fit.df_resid - out.sum() > 0:
                keep = ~out
                fit = sm.OLS(y[keep], m[keep]).fit()
    return fit, int((~keep).sum())


def _reason(
    kept: bool, verdict: str, ratio: float, lo: float, hi: float, p: float, n: int, n_out: int
) -> str:
    ci = f"without it {ratio:.3f}x the time, 95% CI {lo:.3f}-{hi:.3f}, Holm p {p:.3g}, {n} runs"
    ci += f", {n_out} outlier(s) left out" if n_out else ""
    if kept and verdict == "slower":
        return f"kept: the set is slower without it ({ci})"
    if kept:
        return f"kept: the search found it clearly helpful, the knock-out could not tell ({ci})"
    if verdict == "faster":
        return f"dropped: the set is faster without it ({ci})"
    if verdict == "not slower":
        return f"dropped: shown not slower beyond {THRESHOLD:.0%} without it ({ci})"
    return f"dropped: not measurably slower without it beyond {THRESHOLD:.0%} ({ci})"


def level_sets(best: set[str], cons: Constraints) -> list[tuple[str, set[str]]]:
    """``best`` cut to each category level: (the costliest category allowed, the set)."""
    return [
        (cat, without(best, {f for f in best if rank(f, cons) > i}, cons))
        for i, cat in enumerate(CATEGORIES)
    ]
