"""Either-or pairs in the reduction (tune/reduce.py): two members that each give the saving
but not together (two ways to the same end), so the set is not slower without either alone
and each alone is dropped, yet slower without both.

The test reads the knock-out runs the looks made: the local model (tune/knockout.py) with one
column per member dropped and one for the pair dropped together; the pair's own term (what
dropping both costs beyond each alone) is tested one-sided, Holm over every pair (the
substitutes among members shown needed and the pairs among members dropped, one family) at
``PAIR_ALPHA``, the pairs' share of the reduction's 5 % (tune/spending.py), and the joint
cost (both columns and their product) must pass compare's threshold.
The reduction then keeps one of the pair, the nicer, as "either A or B": shown needed as an
alternative, never as a member on its own.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass

import numpy as np

from perflab.analysis.stats import norm_ppf, t_ppf, t_sf
from perflab.tune.knockout import (
    REACH,
    THRESHOLD,
    Evidence,
    Local,
    exact_ols,
    local_rows,
    robust_fit,
)
from perflab.tune.spending import PAIR_ALPHA

#: At most this many members not shown needed are paired (the pairs grow as the square).
MOST = 10
#: A pair is tested only if this many runs dropped both: the pair's own term fits one or
#: two such runs (nearly) exactly, so a rare 2x outlier among them, which the outlier test
#: cannot see there, made a null pair (4 of 150 seeds with one run, tests/tune/test_spending.py).
MIN_BOTH = 3
#: Suspected substitutes get targeted runs dropping both until this many runs near the set
#: did (one beyond MIN_BOTH: a run the outlier test leaves out must not make it untestable).
#: A knock-out design dropping each member with probability 1/4 makes ~6 such runs in 90
#: for a given two, too few in a third of eitheror's seeds (docs/tune.md).
TARGET_BOTH = MIN_BOTH + 1
#: At most this many suspected pairs get targeted runs (the most suspect first).
SUSPECTS = 3
#: A pair of members shown needed is suspected to be substitutes when, in the search's runs,
#: the product of their memberships has a positive term (together they save less than each
#: alone adds up to) with t beyond this (one-sided 5 %): a screen that only says where runs
#: go, never a test.
SUSPECT_T = norm_ppf(0.95)


@dataclass
class Pair:
    """Two members whose joint drop costs ``ratio`` (time without both ÷ with), with its
    interval at ``confidence``, from ``runs`` runs near the set, ``both`` of them dropping
    both; ``p`` is Holm-adjusted over the pairs."""

    a: str
    b: str
    ratio: float
    ci_low: float
    ci_high: float
    confidence: float
    runs: int
    both: int
    p: float
    #: each one's log cost alone (beside the other), in the model with the pair's term
    alone: tuple[float, float] = (0.0, 0.0)


def _fit(
    local: Local, col: dict[str, int], a: str, b: str, found: list[np.ndarray]
) -> tuple | None:
    """The local model, with the products of the pairs ``found`` so far, and the product of
    ``a``'s and ``b``'s drop columns: (the joint drop's log cost and its se, the pair's own
    term and its se, residual df, each one's log cost alone and its se), or None when the
    runs cannot tell the product or either member apart (other columns may be aliased: the
    members of a group always dropped together are, and are not what this asks)."""
    both = local.x[:, col[a]] * local.x[:, col[b]]
    x = np.column_stack([local.x, *found, both])
    rank = np.linalg.matrix_rank(x)
    if both.sum() < MIN_BOTH or len(local.y) <= rank or not _estimable(x, rank, col[a], col[b]):
        return None
    fit, _ = robust_fit(x, np.log(local.y))
    beta = np.asarray(fit.params)
    w = np.zeros(x.shape[1])
    w[[col[a], col[b], -1]] = 1.0
    if exact_ols(fit):
        se, se_i, se_a, se_b, df = 0.0, 0.0, 0.0, 0.0, 1.0
    else:
        # for an estimable contrast any generalized inverse gives the same variance
        cov = np.asarray(fit.cov_params())
        se, se_i = float(np.sqrt(w @ cov @ w)), float(np.sqrt(cov[-1, -1]))
        se_a, se_b = (float(np.sqrt(cov[col[f], col[f]])) for f in (a, b))
        df = max(float(fit.df_resid), 1.0)
    alone = (float(beta[col[a]]), se_a, float(beta[col[b]]), se_b)
    return float(w @ beta), se, float(beta[-1]), se_i, df, *alone


def _estimable(x: np.ndarray, rank: int, *cols: int) -> bool:
    """Whether the columns ``cols`` and the last (the pair's product) are each estimable:
    none is a combination of the other columns."""
    return all(np.linalg.matrix_rank(np.delete(x, j, 1)) < rank for j in (*cols, x.shape[1] - 1))


def suspects(
    search: list[tuple[frozenset[str], float]], slower: list[str]
) -> list[tuple[str, str]]:
    """Pairs of ``slower`` (members each shown needed alone) that the search's runs suggest
    are substitutes: OLS of log time on every factor that varied plus the pair's product,
    whose term is positive with t beyond ``SUSPECT_T``, and at least 2 runs held neither.
    Most suspect first, at most ``SUSPECTS``; the order is the t's, never the names'."""
    import statsmodels.api as sm

    factors = sorted({f for s, _ in search for f in s})
    if len(search) < 4 or not factors:
        return []
    x = np.array([[float(f in s) for f in factors] for s, _ in search])
    varied = x[:, [j for j in range(x.shape[1]) if 0 < x[:, j].sum() < len(search)]]
    y = np.log([v for _, v in search])
    out = []
    for a, b in itertools.combinations(sorted(f for f in slower if f in factors), 2):
        ia, ib = factors.index(a), factors.index(b)
        if ((1 - x[:, ia]) * (1 - x[:, ib])).sum() < 2 or len(y) <= varied.shape[1] + 2:
            continue
        m = sm.add_constant(np.column_stack([varied, x[:, ia] * x[:, ib]]), has_constant="add")
        fit = sm.OLS(y, m).fit(method="pinv")
        t = float(fit.params[-1] / fit.bse[-1]) if fit.bse[-1] > 0 else 0.0
        if math.isfinite(t) and t > SUSPECT_T:
            out.append((round(t, 9), a, b))
    return [(a, b) for _, a, b in sorted(out, key=lambda q: -q[0])[:SUSPECTS]]


def wanted(
    seen: list[tuple[frozenset[str], float]],
    best: set[str],
    pairs_: list[tuple[str, str]],
    search_n: int,
    reach: int = REACH,
) -> list[tuple[str, str, int]]:
    """For each pair of ``pairs_``, how many more runs dropping both it needs to reach
    ``TARGET_BOTH`` among the runs near ``best`` the pairs' test reads."""
    members = sorted(best)
    local = local_rows(seen, best, [[f] for f in members], search_n, reach=reach)
    col = {f: j for j, f in enumerate(members)}
    out = []
    for a, b in pairs_:
        both = int((local.groups[:, col[a]] * local.groups[:, col[b]]).sum())
        if both < TARGET_BOTH:
            out.append((a, b, TARGET_BOTH - both))
    return out


def targeted(
    best: set[str],
    current: set[str],
    settled: list[Evidence],
    seen: list[tuple[frozenset[str], float]],
    start: int,
    cut: Callable[[set[str], set[str]], set[str]],
    measure_sets: Callable[[list[set[str]]], list[float]],
    avail: int,
    rng: np.random.Generator,
    reach: int = REACH,
) -> list[tuple[frozenset[str], float]]:
    """Runs of ``current`` without both members of each pair shown needed that the search's
    runs suspect of being substitutes (``suspects``; ``cut`` drops a pair and what requires
    it), until the pairs' test can read it (``TARGET_BOTH`` runs without both), within
    ``avail`` runs, in random order. They call nothing needed: the pairs' test, at its share
    of the 5 %, may only find one of two members already shown needed enough."""
    slower = [e.factors[0] for e in settled if len(e.factors) == 1 and e.verdict == "slower"]
    if len(slower) < 2 or avail <= 0:
        return []
    want = wanted(seen, best, suspects(seen[:start], slower), start, reach)
    sets = [cut(current, {a, b}) for a, b, k in want for _ in range(k)][:avail]
    if not sets:
        return []
    sets = [sets[i] for i in rng.permutation(len(sets))]
    ys = measure_sets(sets)
    return [
        (frozenset(s), float(y))
        for s, y in zip(sets, ys, strict=True)
        if math.isfinite(y) and y > 0
    ]


def _p(inter: float, se_i: float, df: float) -> float:
    """One-sided p of the pair's own term (both dropped cost more than each alone adds)."""
    return float(t_sf(inter / se_i, df)) if se_i > 0 else float(inter <= 0)


def substitutes(
    seen: list[tuple[frozenset[str], float]],
    best: set[str],
    members: list[str],
    slower: list[str],
    search_n: int,
    reach: int = REACH,
) -> list[Pair]:
    """Pairs of ``slower`` (members each shown needed by a main-effects look) that are
    substitutes: the pair's own term is significant (one-sided, Holm over the pairs at
    ``PAIR_ALPHA``) and beyond ``THRESHOLD``, while with it in the model neither alone
    costs ``THRESHOLD``: either is enough, the main-effects look had given each a share of
    the joint cost. Largest joint cost first."""
    return both_kinds(seen, best, members, slower, [], search_n, reach)[0]


def both_kinds(
    seen: list[tuple[frozenset[str], float]],
    best: set[str],
    members: list[str],
    slower: list[str],
    dropped: list[str],
    search_n: int,
    reach: int = REACH,
    alpha: float = PAIR_ALPHA,
) -> tuple[list[Pair], list[Pair]]:
    """(``substitutes`` among ``slower``, ``pairs`` among ``dropped``), tested as one family
    at ``alpha``: the reduction's pairs spend one share of its 5 %, whichever kind they are
    (tune/spending.py). Holm's step-down, with the product of each pair found in the model
    of the pairs tested after it: a real pair's term left out of the model made a null
    member paired with one of it look significant (16 of 150 seeds at 0.75 %,
    tests/tune/test_spending.py)."""
    local = local_rows(seen, best, [[f] for f in members], search_n, reach=reach)
    col = {f: 1 + local.extra + j for j, f in enumerate(members)}
    cand = [(a, b, True) for a, b in itertools.combinations(slower[:MOST], 2)]
    cand += [(a, b, False) for a, b in itertools.combinations(dropped[:MOST], 2)]
    products: list[np.ndarray] = []
    tests = _tests(local, col, cand, range(len(cand)), products)
    m, level = len(tests), 0.0
    subs: list[Pair] = []
    drops: list[Pair] = []
    while tests:
        i = min(tests, key=lambda j: (tests[j][1], j))
        level = max(level, min(1.0, tests[i][1] * (m - len(products))))
        if level > alpha:
            break
        a, b, substitute = cand[i]
        products.append(local.x[:, col[a]] * local.x[:, col[b]])
        (subs if substitute else drops).extend(_decide([tests.pop(i)[0]], [level], alpha))
        tests = _tests(local, col, cand, list(tests), products)
    return _largest_first(subs), _largest_first(drops)


def _tests(
    local: Local,
    col: dict[str, int],
    cand: list[tuple[str, str, bool]],
    which: Iterable[int],
    found: list[np.ndarray],
) -> dict[int, tuple[tuple, float]]:
    """``_test`` of each candidate in ``which`` that the runs can tell apart."""
    out = {}
    for i in which:
        got = _test(local, col, cand[i], found)
        if got is not None:
            out[i] = got
    return out


def _test(
    local: Local, col: dict[str, int], cand: tuple[str, str, bool], found: list[np.ndarray]
) -> tuple[tuple, float] | None:
    """Pair ``cand`` (a, b, whether substitutes among members shown needed) in the model
    with the ``found`` pairs' products: ((a, b, the joint drop's log cost, 0 unless the
    pair's own term is beyond the threshold (and, for substitutes, neither alone is), its
    se, df, runs, runs without both), its one-sided p), or None if no run tells it apart."""
    a, b, substitute = cand
    got = _fit(local, col, a, b, found)
    if got is None:
        return None
    est, se, inter, se_i, df, alone_a, se_a, alone_b, se_b = got
    # the test is of the pair's own term (both dropped cost more than each alone adds):
    # a member's main effect must not make a pair with a null
    bound = math.log1p(THRESHOLD)
    # substitutes: at least one of them costs nothing beside the other (its estimate below
    # the threshold): that one may leave (tune/reduce.py keeps the nicer, unless the nicer is
    # the one that costs nothing alone). Asking it of both kept e and r in 5 of eitheror's 20
    # seeds (e alone 1.032x where the truth is 1); asking neither to be *shown* beyond it let
    # sparse's x1 (6.5 % beside x0) leave in some seeds
    ok = inter >= bound and (not substitute or min(alone_a, alone_b) < bound)
    both = int((local.x[:, col[a]] * local.x[:, col[b]]).sum())
    row = (a, b, est if ok else 0.0, se, df, len(local.y), both, (alone_a, alone_b))
    return row, _p(inter, se_i, df)


def _decide(found: list[tuple], adjusted: list[float], alpha: float) -> list[Pair]:
    """The pairs (each significant, Holm at ``alpha`` over the family) whose joint cost is
    beyond ``THRESHOLD``, with the joint cost's interval at the same level."""
    out = []
    for (a, b, est, se, df, n, n_both, alone), p in zip(found, adjusted, strict=True):
        if est >= math.log1p(THRESHOLD):
            q = float(t_ppf(1 - alpha, df))
            lo, hi = math.exp(est - q * se), math.exp(est + q * se)
            conf = 1 - 2 * alpha
            out.append(Pair(a, b, math.exp(est), lo, hi, conf, n, n_both, float(p), alone))
    return out


def _largest_first(found: list[Pair]) -> list[Pair]:
    """Largest joint cost first (then the smaller p)."""
    return sorted(found, key=lambda q: (-round(q.ratio, 9), round(q.p, 12)))


def pairs(
    seen: list[tuple[frozenset[str], float]],
    best: set[str],
    members: list[str],
    dropped: list[str],
    search_n: int,
    reach: int = REACH,
) -> list[Pair]:
    """The pairs of ``dropped`` (members of ``best`` not shown needed) whose joint drop makes
    the set measurably slower (significant, Holm over the pairs at ``PAIR_ALPHA``, and
    the estimate beyond ``THRESHOLD``), largest joint cost first. ``members`` are every
    member of ``best`` (each a column of the model); pairs never dropped together in any run
    are not tested."""
    return both_kinds(seen, best, members, [], dropped, search_n, reach)[1]
