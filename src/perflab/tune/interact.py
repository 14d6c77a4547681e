"""Products of members whose effects the search's runs show depend on each other, as columns
of the knock-out looks' local model (tune/knockout.py).

The local model is log-linear: each dropped member scales the time by its own factor. Where
two members' effects multiply with a term of their own (a 1.35x product of ``a`` and ``b``
on the multiplicative truth), the runs that drop both misfit, the residual grows and the
misfit is shared out among the other members' estimates: a 4 % member looked "not slower"
(0.964x, 95.6 % CI 0.915-1.015, seed 4). With the product of the two drop columns in the
model, each member's coefficient is the cost of dropping it alone from the set (the other
kept), which is what "needed" means, and the others' estimates are freed of the misfit.

The pairs come from the search's runs only (a screen that adds columns, never a test: a
column chosen from other runs cannot call a member needed, it only costs a degree of
freedom), at most ``MOST``, the clearest first.
"""

from __future__ import annotations

import itertools
import math
import warnings

import numpy as np

from perflab.analysis.stats import norm_ppf
from perflab.tune.knockout import Local

#: A pair's product enters when its term in the search's runs has |t| beyond this
#: (two-sided 1 %): the screen must not add columns for every chance wiggle. Only members
#: the search presumes needed are paired (tune/reduce.py): among all, null pairs came in.
INTERACT_T = norm_ppf(0.995)
#: At most this many products (each costs the looks a degree of freedom).
MOST = 3
#: A product needs this many runs near the set dropping both: a nuisance column, so one is
#: enough (it then fits that run alone, and frees the other estimates of its misfit; seed 4's
#: first look had two such runs).
MIN_BOTH = 1


def interacting(
    search: list[tuple[frozenset[str], float]], members: list[str]
) -> list[tuple[str, str]]:
    """Pairs of ``members`` whose product term, in an OLS of the search's log times on every
    factor that varied plus that product, has |t| beyond ``INTERACT_T``; the clearest first,
    at most ``MOST``. The order is the t's (rounded), then the names' only at a tie."""
    import statsmodels.api as sm

    factors = sorted({f for s, _ in search for f in s})
    if len(search) < 8 or not factors:
        return []
    x = np.array([[float(f in s) for f in factors] for s, _ in search])
    varied = x[:, [j for j in range(x.shape[1]) if 0 < x[:, j].sum() < len(search)]]
    if len(search) <= varied.shape[1] + 4:
        return []
    y = np.log([v for _, v in search])
    out = []
    for a, b in itertools.combinations(sorted(f for f in members if f in factors), 2):
        prod = x[:, factors.index(a)] * x[:, factors.index(b)]
        if not 2 <= prod.sum() <= len(search) - 2:
            continue
        m = sm.add_constant(np.column_stack([varied, prod]), has_constant="add")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fit = sm.OLS(y, m).fit(method="pinv")
        t = float(fit.params[-1] / fit.bse[-1]) if fit.bse[-1] > 0 else 0.0
        if math.isfinite(t) and abs(t) > INTERACT_T:
            out.append((-round(abs(t), 6), a, b))
    return [(a, b) for _, a, b in sorted(out)[:MOST]]


def with_products(local: Local, cols: list[list[str]], pairs: list[tuple[str, str]]) -> Local:
    """``local`` with a column for each pair of ``pairs`` whose members are each a group of
    their own in ``cols`` (the look's columns, in order) and were dropped together in at
    least ``MIN_BOTH`` runs: the product of their drop columns, among the extra columns."""
    where = {g[0]: j for j, g in enumerate(cols) if len(g) == 1}
    groups = local.groups
    prods = []
    for a, b in pairs:
        if a in where and b in where:
            p = groups[:, where[a]] * groups[:, where[b]]
            if p.sum() >= MIN_BOTH:
                prods.append(p)
    if not prods:
        return local
    k = 1 + local.extra
    x = np.hstack([local.x[:, :k], np.array(prods).T, local.x[:, k:]])
    return Local(x, local.y, local.extra + len(prods))
