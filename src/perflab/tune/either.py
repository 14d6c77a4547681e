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
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from perflab.analysis.stats import t_ppf, t_sf
from perflab.tune.knockout import (
    REACH,
    THRESHOLD,
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


def _fit(
    local: Local, col: dict[str, int], a: str, b: str, found: list[np.ndarray]
) -> tuple | None:
    """The local model, with the products of the pairs ``found`` so far, and the product of
    ``a``'s and ``b``'s drop columns: (the joint drop's log cost and its se, the pair's own
    term and its se, residual df, each one's log cost alone), or None when the runs cannot
    tell the product apart."""
    both = local.x[:, col[a]] * local.x[:, col[b]]
    x = np.column_stack([local.x, *found, both])
    if both.sum() < MIN_BOTH or np.linalg.matrix_rank(x) < x.shape[1] or len(local.y) <= x.shape[1]:
        return None
    fit, _ = robust_fit(x, np.log(local.y))
    beta = np.asarray(fit.params)
    w = np.zeros(x.shape[1])
    w[[col[a], col[b], -1]] = 1.0
    if exact_ols(fit):
        se, se_i, df = 0.0, 0.0, 1.0
    else:
        cov = np.asarray(fit.cov_params())
        se, se_i = float(np.sqrt(w @ cov @ w)), float(np.sqrt(cov[-1, -1]))
        df = max(float(fit.df_resid), 1.0)
    return float(w @ beta), se, float(beta[-1]), se_i, df, float(beta[col[a]]), float(beta[col[b]])


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
    est, se, inter, se_i, df, alone_a, alone_b = got
    # the test is of the pair's own term (both dropped cost more than each alone adds):
    # a member's main effect must not make a pair with a null
    bound = math.log1p(THRESHOLD)
    ok = inter >= bound and (not substitute or max(alone_a, alone_b) < bound)
    both = int((local.x[:, col[a]] * local.x[:, col[b]]).sum())
    return (a, b, est if ok else 0.0, se, df, len(local.y), both), _p(inter, se_i, df)


def _decide(found: list[tuple], adjusted: list[float], alpha: float) -> list[Pair]:
    """The pairs (each significant, Holm at ``alpha`` over the family) whose joint cost is
    beyond ``THRESHOLD``, with the joint cost's interval at the same level."""
    out = []
    for (a, b, est, se, df, n, n_both), p in zip(found, adjusted, strict=True):
        if est >= math.log1p(THRESHOLD):
            q = float(t_ppf(1 - alpha, df))
            lo, hi = math.exp(est - q * se), math.exp(est + q * se)
            out.append(Pair(a, b, math.exp(est), lo, hi, 1 - 2 * alpha, n, n_both, float(p)))
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
