"""A culprit's hunk groups measured together, not one at a time: a two-level factorial over the
``k`` groups (each reverted to the commit before, or not), full for ``k ≤ 4`` and a
resolution-V or higher fraction up to ``MOST_GROUPS``, so every group's effect and every
two-way interaction between groups is estimable (each aliased only with interactions of three
or more groups, taken to be none). Pure: the runs are the caller's.

The model is fitted on the log of the metric (noise is multiplicative) by OLS, with a block
per replicate (each replicate runs every cell once, in its own order, as ABBA pairs share the
machine's state): ``log y = b0 + Σ b_g x_g + Σ b_gh x_g x_h + block``, ``x_g = 1`` when
group g is reverted. From it, each a contrast with a t interval:

* ``revert`` — the culprit with g alone reverted, against the culprit: ``b_g`` (what the
  one-at-a-time revert measured);
* ``alone`` — g applied alone to the commit before (every other measured group reverted):
  ``−b_g − Σ_h b_gh``;
* ``interaction`` of g and h — what applying both adds beyond each alone: ``b_gh`` (the same
  in either direction); on the commit before, ``alone`` and the interactions add up to the
  groups' whole effect;
* ``share`` — g's part of the culprit's step with its interactions split evenly between the
  two groups (the Shapley value under this model, the factorial's main effect):
  ``−b_g − ½ Σ_h b_gh``; the shares add up to the groups' whole effect.

Shares are over log(culprit's ratio), the step the bisection measured (taken as known, as the
one-at-a-time shares were).

The replicates are run look by look (``sequential``): at the gate's looks (from
``FIRST_LOOK`` replicates, about 1.5× apart, the last at the most replicates; the levels add
up to alpha), the fit is made at the look's level and the runs stop once every group's
effect (its share: the factorial's main effect) is known — "decided" (its interval excludes
no effect) or "negligible" (its interval within ±threshold as a ratio, the gate's no
difference). By the union bound over the looks, the chance that any interval the result
states misses its truth stays at most alpha however early the runs stop. The interactions
are stated at the stopping look's level; they do not hold the runs up.
"""

from __future__ import annotations

import itertools
import math
import warnings
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from perflab.analysis.stats import bonferroni_level, t_ppf
from perflab.compare.stats import look_levels as gate_looks

#: One run: (replicate, the cell's reverted indicators, the value; None when it failed).
Row = tuple[int, list[int], float | None]
#: The first look, in replicates: before it the block model has few residual df.
FIRST_LOOK = 3

#: The most groups measured as a factorial: 8 groups take 64 cells (2^(8−2), resolution V);
#: more are measured one at a time, their interactions said unassessable.
MOST_GROUPS = 8
#: Generators of the fractions (minimum aberration): each extra group's column is the
#: product of the base groups named (0-based).
GENERATORS: dict[int, list[tuple[int, ...]]] = {
    5: [(0, 1, 2, 3)],  # 2^(5−1), resolution V
    6: [(0, 1, 2, 3, 4)],  # 2^(6−1), resolution VI
    7: [(0, 1, 2, 3, 4, 5)],  # 2^(7−1), resolution VII
    8: [(0, 1, 2, 3), (0, 1, 4, 5)],  # 2^(8−2), resolution V
}


#: The resolution of each fraction: its shortest word's length.
RESOLUTION = {5: "V", 6: "VI", 7: "VII", 8: "V"}


def design(k: int) -> np.ndarray | None:
    """The cells for ``k`` groups, one row each, 1 where a group is reverted: the full 2^k
    for ``k ≤ 4``, a resolution-V (or higher) fraction up to ``MOST_GROUPS``; None beyond."""
    if not 1 <= k <= MOST_GROUPS:
        return None
    extra = GENERATORS.get(k, [])
    base = k - len(extra)
    full = np.array(list(itertools.product((-1, 1), repeat=base)), float)
    cols = [full] + [np.prod(full[:, list(g)], axis=1, keepdims=True) for g in extra]
    return (np.hstack(cols) + 1) / 2


def design_name(k: int) -> str:
    """How the cells were chosen, in words."""
    if k <= 4:
        return f"full 2^{k} factorial"
    return f"2^({k}−{len(GENERATORS[k])}) fraction, resolution {RESOLUTION[k]}"


def replicates(k: int, cells: int, n_max: int) -> int:
    """Replicates of the cells: as many runs as the one-at-a-time reverts would make at
    most (2 · k · n_max), and at least two (a block per replicate needs a second)."""
    return max(2, math.ceil(2 * k * n_max / cells))


def terms(k: int) -> list[tuple[int, ...]]:
    """The model's terms after the mean: each group, then each pair."""
    return [(g,) for g in range(k)] + list(itertools.combinations(range(k), 2))


def fit(
    rows: Sequence[tuple[int, list[int], float | None]], k: int, whole: float, alpha: float
) -> dict[str, Any]:
    """The estimates from ``rows`` (replicate, the cell's reverted indicators, value > 0;
    none failed);
    ``whole`` the log of the culprit's ratio. Each contrast's interval is at ``alpha`` over
    the family of the k shares and the k(k−1)/2 interactions (Bonferroni); a contrast the
    runs cannot estimate (cells lost to failed runs) is None with why."""
    import statsmodels.api as sm

    reps = sorted({r for r, _, _ in rows})
    x = np.array([[1.0, *(float(np.prod([c[i] for i in t])) for t in terms(k)),
                   *(float(r == b) for b in reps[1:])] for r, c, _ in rows])  # fmt: skip
    y = np.log(np.array([v for _, _, v in rows], float))
    with warnings.catch_warnings():  # cells lost to failed runs: said below, per contrast
        warnings.simplefilter("ignore")
        res = sm.OLS(y, x).fit()
    df = float(res.df_resid)
    pairs = list(itertools.combinations(range(k), 2))
    level = bonferroni_level(alpha, k + len(pairs))
    t = float(t_ppf(0.5 + (1 - level) / 2, df)) if df > 0 else math.nan
    cov = np.asarray(res.cov_params()) if df > 0 else None
    null = _null_space(x)

    def est(coef: dict[tuple[int, ...], float]) -> dict[str, float] | None:
        c = np.zeros(x.shape[1])
        for term, w in coef.items():
            c[1 + terms(k).index(term)] = w
        if cov is None or np.abs(null.T @ c).max(initial=0.0) > 1e-8:
            return None
        v = float(c @ res.params)
        half = t * math.sqrt(max(float(c @ cov @ c), 0.0))
        return {"log": v, "low": v - half, "high": v + half}

    groups = []
    for g in range(k):
        inter = {tuple(sorted((g, h))): 1.0 for h in range(k) if h != g}
        groups.append({
            "revert": est({(g,): 1.0}),
            "alone": est({(g,): -1.0, **{p: -1.0 for p in inter}}),
            "share": est({(g,): -1.0, **{p: -0.5 for p in inter}}),
        })  # fmt: skip
    every = {tm: -1.0 for tm in terms(k)}
    return {
        "groups": groups,
        "interactions": [{"pair": list(p), "effect": est({p: 1.0})} for p in pairs],
        "total": est(every),
        "level": level,
        "df": df,
        "whole": whole,
    }


def _null_space(x: np.ndarray) -> np.ndarray:
    """Columns spanning the null space of ``x``: a contrast is estimable when it is
    orthogonal to all of them."""
    _, sv, vt = np.linalg.svd(x, full_matrices=True)
    rank = int(np.sum(sv > 1e-8 * max(sv.max(initial=0.0), 1.0)))
    return np.asarray(vt[rank:].T)


def as_share(e: dict[str, float] | None, whole: float) -> dict[str, float] | None:
    """A log contrast as a share of the culprit's step (``whole``, its log ratio)."""
    if e is None:
        return None
    lo, hi = sorted((e["low"] / whole, e["high"] / whole))
    return {"share": e["log"] / whole, "share_low": lo, "share_high": hi}


def as_ratio(e: dict[str, float] | None, threshold: float) -> dict[str, Any] | None:
    """A log contrast as a ratio with its interval and a verdict (faster, slower, no
    difference within ±threshold, or inconclusive)."""
    if e is None:
        return None
    lo, hi = math.exp(e["low"]), math.exp(e["high"])
    verdict = ("faster" if hi < 1 else "slower" if lo > 1
               else "no difference" if 1 / (1 + threshold) <= lo and hi <= 1 + threshold
               else "inconclusive")  # fmt: skip
    return {"ratio": math.exp(e["log"]), "low": lo, "high": hi, "verdict": verdict}


def look_levels(reps: int, alpha: float, early: bool = True) -> dict[int, float]:
    """Replicates at which the factorial looks → the level of that look's fit: the gate's
    looks (``compare.stats.look_levels``) from ``FIRST_LOOK`` to ``reps``, early looks sharing
    a fifth of alpha, the last the rest; without ``early`` (``--fixed``) one look at ``reps``.
    The levels add up to ``alpha`` (the union bound over the looks)."""
    return gate_looks(min(FIRST_LOOK, reps), reps, alpha, early)


def states(est: dict[str, Any] | None, threshold: float) -> list[str]:
    """Each group's state at a look, from its share's interval (log scale): "decided" (it
    excludes 0), "negligible" (within ±log(1 + threshold)), else "open" (also when the runs
    cannot estimate it yet)."""
    if est is None:
        return []
    band = math.log1p(threshold)
    out = []
    for g in est["groups"]:
        e = g["share"]
        if e is None or not math.isfinite(e["low"]) or not math.isfinite(e["high"]):
            out.append("open")
        elif e["low"] > 0 or e["high"] < 0:
            out.append("decided")
        elif -band <= e["low"] and e["high"] <= band:
            out.append("negligible")
        else:
            out.append("open")
    return out


def sequential(
    block: Callable[[int], list[Row]], k: int, whole: float, alpha: float, threshold: float,
    reps: int, early: bool = True,
) -> dict[str, Any]:  # fmt: skip
    """Run replicate after replicate (``block(r)``: replicate r's rows) and fit at each look
    of ``look_levels`` until every group is known (``states``) or ``reps`` are run. The last
    look's fit (None when its runs cannot be fitted) with ``stopped`` (why), ``replicates``
    (run), ``most`` (``reps``), ``looks`` (each look's replicates, level and states) and
    ``levels``."""
    levels = look_levels(reps, alpha, early)
    rows: list[Row] = []
    seen: list[dict[str, Any]] = []
    est, why, n = None, "most replicates", 0
    for n in range(1, reps + 1):
        rows += block(n - 1)
        if n not in levels:
            continue
        ok = [(r, c, v) for r, c, v in rows if v is not None]
        est = fit(ok, k, whole, levels[n]) if len(ok) > 1 else None
        now = states(est, threshold)
        seen.append({"replicates": n, "level": levels[n], "states": now})
        if now and all(s != "open" for s in now):
            why = "every group decided or negligible"
            break
    return {"fit": est, "stopped": why, "replicates": n, "most": reps, "looks": seen,
            "levels": {str(r): v for r, v in levels.items()}}  # fmt: skip
