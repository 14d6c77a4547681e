"""The cost of dropping a member alone from the set the looks keep, for members the looks
dropped (tune/reduce.py).

The looks' local model is log-linear in the drops: a member's cost is averaged over the runs
that drop it, whatever else they drop. A member whose effect depends on the state of the set
(``h`` on the multiplicative truth costs 15 %, but keeps the set's time above the point where
``s`` helps: dropped alone the set is 1.125x slower, dropped with anything else faster) gets
an average near 1 and goes. This test reads only the runs that drop nothing the set keeps but
the member (the dropped members stay as columns): the set's own neighbour, which is what
"needed" means. It can only bring a member back, at the split look's share of the 5 %
(``SPLIT_SHARE``, tune/spending.py) when no split look spent it, Bonferroni over the members
tested, so the levels of all the reduction's tests still add up to at most 5 %. A member the
looks kept on doubt (inconclusive) is tested too: the test can show it needed.
"""

from __future__ import annotations

import math

import numpy as np

from perflab.analysis.stats import bonferroni_level, t_ppf, t_sf
from perflab.tune.knockout import MARGIN, Evidence, exact_ols, local_rows, robust_fit

#: A member is tested alone only if this many runs dropped it and nothing the set keeps.
MIN_ALONE = 3


def alone(
    best: set[str],
    current: set[str],
    settled: list[Evidence],
    fixed: list[list[str]],
    seen: list[tuple[frozenset[str], float]],
    start: int,
    alpha: float,
    reach: int,
    presumed: frozenset[str] = frozenset(),
) -> tuple[list[str], list[Evidence]]:
    """Members tested alone whom the looks did not show needed (dropped, or kept on doubt)
    that the set is slower without, alone (one-sided t at
    ``alpha``, Bonferroni over the members tested, and the estimate beyond ``MARGIN``, the
    tune's 5 % tolerance: a small cost is the looks' to find, with more runs; a null found
    here at 2-4 % raised reduction_null's false "needed" 10 -> 12 of 200):
    their names and their new evidence (verdict "slower"). Runs that drop a member the set
    keeps are left out, and so are runs that hold a ``presumed`` member the set lost."""
    doubt = ("faster", "not slower", "inconclusive")  # kept on doubt or dropped: not shown
    cands = [e.factors[0] for e in settled if len(e.factors) == 1 and e.verdict in doubt]
    paired = {f for e in settled if e.verdict in ("either", "alternative") for f in e.group or []}
    cands = [f for f in cands if f not in paired]  # an either-or pair's other: not needed alone
    if not cands or alpha <= 0 or not fixed:
        return [], []
    local = local_rows(seen, best, fixed, start, reach=reach)
    groups, extra = local.groups, local.x[:, : 1 + local.extra]
    tests = []
    for f in cands:
        j = next((i for i, g in enumerate(fixed) if g == [f]), None)
        if j is None:
            continue
        keeps = [i for i, g in enumerate(fixed) if set(g) <= current and i != j]
        rows = np.ones(len(local.y), bool)
        if keeps:
            rows &= ~groups[:, keeps].any(axis=1)
        # a strongly supported member the looks dropped may hold the state too: only runs
        # without it, as the set is (L=2 beside h, seed 12: h needed only with L=2 there)
        gone = [i for i, g in enumerate(fixed) if i != j and set(g) <= presumed - current]
        if gone:
            rows &= groups[:, gone].all(axis=1)
        col = groups[rows, j]
        n_alone = int(col.sum())
        if n_alone < MIN_ALONE or n_alone == len(col):
            continue
        others = [i for i in range(groups.shape[1]) if i != j and i not in keeps + gone]
        x = np.hstack([extra[rows], groups[rows][:, others]])
        x = x[:, [k for k in range(x.shape[1]) if k == 0 or np.ptp(x[:, k]) > 0]]
        x = np.hstack([x, col[:, None]])
        if len(col) <= x.shape[1] + 2:
            continue
        fit, _ = robust_fit(x, np.log(local.y[rows]))
        if exact_ols(fit) or not np.isfinite(fit.bse[-1]) or fit.bse[-1] <= 0:
            continue
        tests.append((f, float(fit.params[-1]), float(fit.bse[-1]), float(fit.df_resid), n_alone))
    level = bonferroni_level(alpha, len(tests))  # not a fixed sequence: the search's order
    # of support put a null before L=1 (seed 8); a state-dependent member's drop is clear
    names, out = [], []
    for f, est, se, df, n_alone in tests:
        p = float(t_sf(est / se, max(df, 1)))
        if not (p <= level and est >= math.log1p(MARGIN)):
            continue
        q = float(t_ppf(1 - level, max(df, 1)))
        r, lo, hi = math.exp(est), math.exp(est - q * se), math.exp(est + q * se)
        why = (
            f"kept: the set is slower without it alone (without it {r:.3f}x the time, "
            f"{1 - 2 * level:.1%} CI {lo:.3f}-{hi:.3f}, p {p:.3g}, Bonferroni over "
            f"{len(tests)}, {n_alone} runs without it and nothing else the set "
            f"keeps); the looks' average over every drop did not show it"
        )
        names.append(f)
        out.append(Evidence([f], True, "slower", r, lo, hi, 1 - 2 * level, n_alone, why))
    return names, out
