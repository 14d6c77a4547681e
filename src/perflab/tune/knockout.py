"""Knock-out looks for the reduction (tune/reduce.py): is the set slower without a member?

A look runs ``best`` with some groups of members dropped (``knockout_design``) and fits one
local model to every run near ``best`` so far: log time on which groups each run dropped,
plus a column for each other factor in which a borrowed run differs from ``best``, one for
"measured during the search" (the search's runs were measured earlier: a block) and one for
the run's place in time (a machine's slow drift over the campaign). The search's
runs near the set and the earlier looks' runs are thereby knock-out runs too, for free.

Each look tests at its share of ``ALPHA`` (tune/spending.py: the share of the reduction's runs the
look brought, Lan–DeMets linear spending; the shares add up to at most ``ALPHA``, a union
bound over the looks, Holm over the groups within a look), so the reduction may look after
every chunk of runs and stop testing what is decided without raising the family-wise error
of keeping a member that does nothing. A look that brings most of the runs gets most of the
level (at a short budget, one look of nearly every run tests at nearly ``ALPHA``).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import statsmodels.api as sm

from perflab.analysis.exact import EXACT_RTOL
from perflab.analysis.stats import (
    Z95,
    bonferroni,
    bonferroni_level,
    studentized_external,
    t_ppf,
    t_sf,
    z_quantile,
)
from perflab.tune.spending import ALPHA, LOOKS, ordered_tests

#: Dropping must make the set slower by more than this for a member to stay (compare's rule).
THRESHOLD = 0.02
#: The level of a look that brought no share of its own (Bonferroni over the looks).
LOOK_ALPHA = bonferroni_level(ALPHA, LOOKS)
#: Each knock-out run drops each member with this chance: state dependence is judged near the set.
DROP_P = 0.25
#: A search run is borrowed if it differs from the set in at most this many groups or factors
#: (each a column): near the pick, where state-dependent factors are judged.
REACH = 1
#: ... at a short budget (below 15 runs per candidate) at any distance, every group whole:
#: more runs at the cost of locality (100 runs, 20 seeds: sparse within 5% 0.50 -> 0.75; at
#: 300 the far runs' bias cost the traps truth clean 1.00 -> 0.80, so only when short).
FAR = 99
#: Runs near the set from which the local model has a time column (slow drift).
DRIFT_MIN = 24
#: A look whose 95% interval is wider than this either side is blind to it: inconclusive stays.
MARGIN = 0.05


#: Verdicts of a member kept with a group it was never tested apart from: a split look
#: (``least_runs`` of the group) would resolve it.
SPLIT_ME = ("unresolved", "unassessable")


@dataclass
class Evidence:
    """One drop test: the set without ``factors`` against the set with them.

    ``ratio`` is time without ÷ time with (above 1: dropping is slower), with its interval at
    ``confidence`` (the look's level), from ``runs`` runs; ``verdict`` says what the set is
    without them: "slower" (significant, Holm, and beyond the threshold), "faster" (the
    interval ends below 1), "not slower" (it ends below the threshold), "inconclusive", or
    "untested", or "unresolved" (kept only with a slower group never split: no ratio of its
    own, ``group`` names the group), or "unassessable" (kept with a group never varied apart
    whose drop was not slower: its members may do nothing or cancel; no ratio, ``group``
    names it), or "either" (kept as one of an either-or pair, the nicer, ``group`` names
    the pair, tune/either.py), or "alternative" (not kept: the other of such a pair, needed
    only without the nicer)."""

    factors: list[str]
    kept: bool
    verdict: str
    ratio: float | None = None
    ci_low: float | None = None
    ci_high: float | None = None
    confidence: float | None = None
    runs: int = 0
    reason: str = ""
    group: list[str] | None = None  # "unresolved": the group it was kept with; "either": the pair

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def least_runs(m: int) -> int:
    """Runs near the set a look at ``m`` groups needs (plus one per other column). With fewer,
    a 10% drop cost at 4% noise is missed about as often as found (bench/best_set.py), and a
    member dropped for want of power costs the user more than one kept and marked untested."""
    return 2 * m + 8


def shortfall(evidence: list[Evidence]) -> int:
    """About how many more knock-out runs would test every member kept without being shown
    needed: an inconclusive look's interval narrows as 1/sqrt(runs) until it can tell a
    ``MARGIN`` cost from none; an untested group needs a look of its own. An estimate."""
    more = [0]
    for e in evidence:
        if e.kept and e.verdict == "inconclusive" and e.ci_low and e.ci_high and e.confidence:
            se = math.log(e.ci_high / e.ci_low) / (2 * z_quantile(e.confidence))
            more.append(math.ceil(e.runs * (Z95 * se / math.log1p(MARGIN)) ** 2) - e.runs)
    untested = sum(e.verdict == "untested" for e in evidence)
    groups = {tuple(e.group) for e in evidence if e.verdict in SPLIT_ME and e.group}
    split = sum(least_runs(len(g)) for g in groups)
    return max(more) + (least_runs(untested) if untested else 0) + split


def resolve_runs(e: Evidence, evidence: list[Evidence]) -> int:
    """About how many knock-out runs would resolve one member kept without being shown
    needed: its inconclusive interval narrowed to a ``MARGIN`` cost, its group split, or a
    look at every untested member. An estimate."""
    if e.verdict in SPLIT_ME and e.group:
        return least_runs(len(e.group))
    if e.verdict == "untested":
        return least_runs(sum(x.verdict == "untested" for x in evidence))
    return shortfall([e])


def knockout_design(m: int, runs: int, rng: np.random.Generator) -> np.ndarray:
    """``runs`` rows over ``m`` members, 1 = dropped: about one run in five drops nothing, the
    others each member with probability ``DROP_P``; the best of a few random draws by
    D-criterion, every member dropped in some runs and kept in others where the runs allow."""
    best, best_det = np.zeros((runs, m)), -np.inf
    for _ in range(64 if runs else 0):
        x = (rng.random((runs, m)) < DROP_P).astype(float)
        x[rng.random(runs) < 0.2] = 0
        m1 = np.hstack([np.ones((runs, 1)), x])
        varied = int(((x.sum(axis=0) > 0) & (x.sum(axis=0) < runs)).sum())
        det = float(np.linalg.slogdet(m1.T @ m1 + 1e-9 * np.eye(m + 1))[1])
        if (varied, det) > (int(((best.sum(0) > 0) & (best.sum(0) < runs)).sum()), best_det):
            best, best_det = x, det
    return best


@dataclass
class Local:
    """The runs near a set as rows of the local model: ``x`` is the constant, the other
    columns (block and differing factors) and then one column per group (1 = dropped)."""

    x: np.ndarray
    y: np.ndarray
    extra: int

    @property
    def groups(self) -> np.ndarray:
        return self.x[:, 1 + self.extra :]


def local_rows(
    seen: list[tuple[frozenset[str], float]],
    best: set[str],
    groups: list[list[str]],
    search_n: int,
    borrow: bool = True,
    reach: int = REACH,
) -> Local:
    """The runs of ``seen`` near ``best``: a group dropped whole or kept whole, at most
    ``REACH`` other differences; a search run (one of the first ``search_n``) also drops at
    most ``REACH`` groups and factors in all. Columns never depend on names: the model's fit
    is the same in any column order."""
    members = {f for g in groups for f in g}
    gone, ys, block, diffs, when = [], [], [], [], []
    for i, (s, y) in enumerate(seen):
        row = [float(not set(g) <= s) for g in groups]
        if any(r and set(g) & s for r, g in zip(row, groups, strict=True)):
            continue  # part of a group dropped: not a knock-out of the group
        other = (best - members - s) | (s - best)
        if len(other) > reach or (i < search_n and sum(row) + len(other) > reach):
            continue
        if i < search_n and not borrow:
            continue
        gone.append(row)
        ys.append(y)
        block.append(float(i < search_n))
        diffs.append(other)
        when.append(i / max(1, len(seen)))
    cols = [block] if 0 < sum(block) < len(block) else []
    # the machine drifts over a campaign: the run's place in time is a covariate (``seen``
    # is in run order), once there are runs enough that it costs little power
    if len(ys) >= DRIFT_MIN and len(set(when)) > 1:
        cols.append(when)
    for f in {f for d in diffs for f in d}:  # a set: the fit does not depend on column order
        cols.append([float(f in d) for d in diffs])
    n, m = len(ys), len(groups)
    x = np.hstack(
        [np.ones((n, 1)), np.array(cols).T.reshape(n, len(cols)), np.array(gone).reshape(n, m)]
    )
    return Local(x, np.array(ys, float), len(cols))


def missing(
    seen: list[tuple[frozenset[str], float]],
    best: set[str],
    groups: list[list[str]],
    n: int,
    fixed: list[list[str]] | None = None,
    reach: int = REACH,
) -> int:
    """New runs a look at ``groups`` needs beyond the runs near ``best`` already seen (the
    ``fixed`` groups, settled by earlier looks, are columns of the model too)."""
    if not groups:
        return 0
    cols = [*(fixed or []), *groups]
    return min(_short(local_rows(seen, best, cols, n, b, reach), len(cols)) for b in (True, False))


def _short(local: Local, m: int) -> int:
    """How many runs ``local`` lacks for a look at ``m`` groups."""
    return max(0, least_runs(m) + local.extra - len(local.y))


def look(
    best: set[str],
    groups: list[list[str]],
    fixed: list[list[str]],
    seen: list[tuple[frozenset[str], float]],
    measure: Callable[[np.ndarray], list[tuple[frozenset[str], float]]],
    runs: int,
    search_n: int,
    presumed: frozenset[str],
    rng: np.random.Generator,
    alpha: float = LOOK_ALPHA,
    prior: dict[str, int] | None = None,
    reach: int = REACH,
    extend: Callable[[Local, list[list[str]]], Local] | None = None,
) -> list[Evidence]:
    """One look: ``runs`` new knock-out runs of ``groups`` (``measure`` runs the design's rows
    and returns the sets and times, which are appended to ``seen``), then the local model on
    every run near ``best``, the search's pick; the groups earlier looks settled (``fixed``)
    are columns too, not tested again, so every earlier run stays in the model. Each group's
    drop cost (time without ÷ with) gets its interval at the look's level; "slower" needs the
    one-sided test significant (``ordered_tests`` at ``alpha``, the look's level) and the
    estimate beyond the practical ``THRESHOLD`` (compare's rule).
    ``kept`` is what the reduction does if this is the last look: a group stays if it is
    slower, untested, or inconclusive where the look was blind to a ``MARGIN`` cost (its 95%
    interval wider than that either side) or ``presumed`` needed by the search with an
    estimate beyond the threshold. Any other inconclusive group goes: at adequate power, a
    member must show it is needed."""
    m = len(groups)
    if runs:
        seen += measure(knockout_design(m, runs, rng))
    # the search's near runs help only if they bring more runs than other columns
    cols = [*fixed, *groups]
    local = local_rows(seen, best, cols, search_n, reach=reach)
    if _short(local, len(cols)):
        local = local_rows(seen, best, cols, search_n, borrow=False)
    n, first = len(local.y), 1 + local.extra + len(fixed)
    if _short(local, len(cols)):
        why = f"kept, not tested: {n} runs near the set, a knock-out of {m} needs "
        why += f"{least_runs(len(cols)) + local.extra}"
        return [Evidence(g, True, "untested", reason=why) for g in groups]
    if extend is not None and not _short(wider := extend(local, cols), len(cols)):
        local, first = wider, 1 + wider.extra + len(fixed)  # e.g. tune/interact.py's products
    fit, n_out = robust_fit(local.x, np.log(local.y))
    rank = np.linalg.matrix_rank(local.x)
    # a group is tested only if its column is not a combination of the others (aliased)
    est = [np.linalg.matrix_rank(np.delete(local.x, first + j, 1)) < rank for j in range(m)]
    cost = np.asarray(fit.params)[first:]
    if exact_ols(fit):
        return exact_evidence(groups, cost, est, n)
    se = np.asarray(fit.bse)[first:]
    df = float(fit.df_resid)
    ok = np.array(est) & np.isfinite(se) & (se > 0) & (df > 0)
    p = np.where(ok, t_sf(cost / np.where(ok, se, 1), max(df, 1)), np.nan)
    adjusted, decided = ordered_tests(list(p), groups, alpha, prior)
    q = float(t_ppf(1 - alpha, max(df, 1)))  # the interval's ends are one-sided tests
    bound = math.log1p(THRESHOLD)
    out = []
    for j, g in enumerate(groups):
        if not ok[j]:
            out.append(_untested(g, n))
            continue
        lo, hi = cost[j] - q * se[j], cost[j] + q * se[j]
        if decided[j] and cost[j] >= bound:
            verdict = "slower"
        elif hi < 0:
            verdict = "faster"
        elif hi <= bound:  # dropping is shown to cost less than the threshold
            verdict = "not slower"
        else:
            verdict = "inconclusive"
        # an inconclusive group stays if the look could not have seen a MARGIN cost (too few
        # runs to tell), or if the search found it clearly helpful and the estimate agrees
        blind = Z95 * se[j] > math.log1p(MARGIN)
        doubt = "blind" if blind else "presumed" if set(g) <= presumed and cost[j] >= bound else ""
        kept = verdict == "slower" or (verdict == "inconclusive" and bool(doubt))
        r, lo_r, hi_r = math.exp(cost[j]), math.exp(lo), math.exp(hi)
        why = _reason(kept, verdict, (r, lo_r, hi_r), float(adjusted[j]), n, n_out, doubt, alpha)
        why = why if len(g) == 1 else why.replace("without it", f"without all {len(g)}", 1)
        out.append(Evidence(g, kept, verdict, r, lo_r, hi_r, 1 - 2 * alpha, n, why))
    return out


def _untested(group: list[str], n: int) -> Evidence:
    """A group whose drop the runs cannot estimate stays (nothing shows it may go)."""
    why = "kept, untested: its drop is aliased with another difference in the runs"
    return Evidence(group, True, "untested", runs=n, reason=why)


def exact_ols(fit: Any) -> bool:
    """Whether an OLS fit of log time is exact (a deterministic score: every residual zero
    to rounding, with residual degrees of freedom to show it; analysis/exact.py)."""
    return bool(fit.df_resid > 0 and math.sqrt(fit.ssr / fit.nobs) <= EXACT_RTOL)


def exact_evidence(
    groups: list[list[str]], cost: np.ndarray, est: list[bool], n: int
) -> list[Evidence]:
    """Exact data: each group's drop cost is what was measured, with no test (a t of
    rounding noise over rounding noise gave "Holm p 0.788" on equal runs) and no interval
    width. Slower beyond the threshold stays; anything else goes."""
    bound = math.log1p(THRESHOLD)
    out = []
    for j, g in enumerate(groups):
        if not est[j]:
            out.append(_untested(g, n))
            continue
        c = 0.0 if abs(cost[j]) <= EXACT_RTOL else float(cost[j])
        verdict = "slower" if c >= bound else "faster" if c < 0 else "not slower"
        r = math.exp(c)
        said = {"slower": "kept: the set is slower without it",
                "faster": "dropped: the set is faster without it",
                "not slower": f"dropped: not slower beyond {THRESHOLD:.0%} without it"}  # fmt: skip
        why = f"{said[verdict]} (without it {r:.3f}x the time; exact data: no test, {n} runs)"
        out.append(Evidence(g, verdict == "slower", verdict, r, r, r, None, n, why))
    return out


def robust_fit(m: np.ndarray, y: np.ndarray) -> tuple[Any, int]:
    """OLS of ``y`` on ``m`` without the runs its outlier test (externally studentized
    residuals, Bonferroni at 5 %) rejects: one run slowed 2x by a neighbour must not keep a
    factor. Returns the fit and how many runs were left out."""
    keep = np.ones(len(y), bool)
    with warnings.catch_warnings():  # pinv: a column aliased with others is not tested
        warnings.simplefilter("ignore")
        fit = sm.OLS(y, m).fit()
        if fit.df_resid > 2:
            # statsmodels' outlier_test(method="bonf"), its correction from the one home
            r, hat = studentized_external(fit)
            out = bonferroni(2 * t_sf(r, fit.df_resid - 1), len(y)) < 0.05
            out &= hat < 1 - 1e-8  # a run alone in its column fits exactly: 0/0 is noise
            if out.any() and fit.df_resid - out.sum() > 0 and _still_tests(m, ~out):
                keep = ~out
                fit = sm.OLS(y[keep], m[keep]).fit()
    return fit, int((~keep).sum())


def _still_tests(m: np.ndarray, keep: np.ndarray) -> bool:
    """Leaving out runs must not take a column's evidence with it (the design keeps its
    rank). A misfit that is the data's own (a score with an interaction the additive model
    lacks, measured without noise) is flagged as outliers that are exactly one group's
    knock-outs; leaving them out would judge that group without them."""
    return bool(np.linalg.matrix_rank(m[keep]) == np.linalg.matrix_rank(m))


def _reason(
    kept: bool,
    verdict: str,
    ratio: tuple[float, float, float],
    p: float,
    n: int,
    n_out: int,
    doubt: str = "",
    alpha: float = LOOK_ALPHA,
) -> str:
    r, lo, hi = ratio
    level = f"{1 - 2 * alpha:.1%}"  # the look's level: its ends are the tests
    ci = f"without it {r:.3f}x the time, {level} CI {lo:.3f}-{hi:.3f}, p(slower) {p:.3g}, {n} runs"
    ci += f", {n_out} outlier(s) left out" if n_out else ""
    if kept and verdict == "slower":
        return f"kept: the set is slower without it ({ci})"
    if kept and doubt == "blind":
        return f"kept: too few runs to tell a {MARGIN:.0%} cost from none ({ci})"
    if kept:
        return f"kept: the search found it clearly helpful and the knock-out leans so ({ci})"
    if verdict == "faster":
        return f"dropped: the set is faster without it ({ci})"
    if verdict == "not slower":
        return f"dropped: shown not slower beyond {THRESHOLD:.0%} without it ({ci})"
    return f"dropped: not measurably slower without it beyond {THRESHOLD:.0%} ({ci})"


def drop_sets(
    best: set[str], groups: list[list[str]], design: np.ndarray, cut: Callable[..., set[str]]
) -> list[set[str]]:
    """The sets of a knock-out design: ``best`` without the groups each row drops."""
    return [cut(best, _members(groups, np.flatnonzero(r))) for r in design]


def _members(groups: list[list[str]], idx: Iterable[int]) -> set[str]:
    return {f for j in idx for f in groups[j]}
