"""How the reduction's knock-out looks (tune/knockout.py) share the family-wise level.

The looks spend ``ALPHA`` in proportion to the runs each brings (Lan–DeMets linear spending
over the reduction's runs, a union bound over the looks: the levels add up to at most
``ALPHA`` whatever the data decide about the looks' number and size), with a share kept for
the look that splits a slower group and a share for the either-or pairs' tests after the
looks (tune/either.py, Holm over every pair). Within a look the groups are tested in the
search's order of support by Wiens' fallback procedure, so a run of clearly needed members
carries the level to the next.

Every test of the reduction that can call a member needed (or another its alternative)
takes its level from the one ``ALPHA``: the ordinary looks ``(1 - SPLIT_SHARE -
PAIR_SHARE) * ALPHA`` between them, the split look ``SPLIT_SHARE * ALPHA``, the pairs
``PAIR_SHARE * ALPHA``. By the union bound the reduction's family-wise error is at most
``ALPHA`` (tests/tune/test_spending.py checks the sum over any schedule of looks and a null
truth's rate of false "needed" over many seeds).
"""

from __future__ import annotations

import math

from perflab.analysis.stats import adjust, fallback

#: Family-wise level of the drop tests (spent over the looks, Holm over the members).
ALPHA = 0.05
#: Looks at the knock-out data at most; each tests at its share of ALPHA (``spend``).
LOOKS = 3
#: The least level a look tests at (a look of few new runs still decides what is clear).
MIN_SHARE = 0.1
#: Share of ALPHA kept for the look that splits a slower group (spent by no other look).
SPLIT_SHARE = 0.2
#: Share of ALPHA for the either-or pairs' tests (tune/either.py): one Holm family over the
#: substitutes among members shown needed and the pairs among members dropped (was a family
#: of its own at ALPHA / LOOKS, on top of the looks' ALPHA).
PAIR_SHARE = 0.15
#: The level of the either-or pairs' family.
PAIR_ALPHA = PAIR_SHARE * ALPHA


def spend(share: float, spent: float, k: int, last: bool) -> float:
    """The level of ordinary look ``k`` (0-based) whose new runs are ``share`` of the
    reduction's runs, after the ordinary looks before it spent ``spent``: they share
    ``(1 - SPLIT_SHARE - PAIR_SHARE) * ALPHA`` in proportion to their runs (linear
    spending), each at least ``MIN_SHARE`` of it (kept back for the looks that may follow),
    the ``last`` what is left. The first look that tests a slower group's members gets
    ``SPLIT_SHARE * ALPHA`` on top (tune/reduce.py) and the pairs ``PAIR_ALPHA`` after the
    looks, so the levels of all tests add up to at most ALPHA (a union bound, whatever the
    data decide about the looks' number and size)."""
    cap = (1 - SPLIT_SHARE - PAIR_SHARE) * ALPHA
    if last:
        return max(0.0, cap - spent)
    ahead = MIN_SHARE * cap * max(0, LOOKS - 1 - k)
    return max(0.0, min(cap * max(MIN_SHARE, share), cap - spent - ahead))


def ordered_tests(
    p: list[float], groups: list[list[str]], alpha: float, prior: dict[str, int] | None
) -> tuple[list[float], list[bool]]:
    """The look's multiplicity correction. With a ``prior`` order (each member's place in
    the search's support, most supported first: fixed before the knock-out runs), Wiens'
    fallback procedure in that order, so a run of clearly needed members carries the level
    to the next (a 7 % member behind five strong ones is tested at 6/9 of the level, not
    Holm's 1/4); without one, Holm. Both hold the family-wise error at ``alpha``."""
    if prior is None:
        return adjust(p, "holm", alpha)
    key = [min(prior.get(f, len(prior)) for f in g) for g in groups]
    order = sorted(range(len(p)), key=lambda j: (key[j], j))
    adj, dec = fallback([p[j] for j in order], alpha)
    out_p, out_d = [math.nan] * len(p), [False] * len(p)
    for i, j in enumerate(order):
        out_p[j], out_d[j] = adj[i], dec[i]
    return out_p, out_d
