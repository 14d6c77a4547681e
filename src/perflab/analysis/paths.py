"""Searching the treatment sets: T(S) from measured means or the model, paths from one set
to another, and exact Shapley attribution (the best set itself: ``bestset``)."""

from __future__ import annotations

import math
from itertools import combinations
from typing import Any

import numpy as np

from perflab.analysis.claims import MAX_EXACT, Predictor, rows_of
from perflab.analysis.data import Dataset
from perflab.analysis.setstats import SetStats, keys_of
from perflab.errors import PerflabError

#: The category of a factor the catalog does not describe.
OTHER = "other"


def category(ds: Dataset, f: str) -> str:
    return ds.meta.categories.get(f, OTHER)


def category_rank(ds: Dataset, f: str) -> int:
    """Position in the "nice" order (safest first); undescribed factors come last."""
    order = ds.meta.category_order
    c = category(ds, f)
    return order.index(c) if c in order else len(order)


class Values:
    """T(S): the measured mean where set S was measured, else the prediction model's value
    (the minimum-norm fit's, which no factor order changes)."""

    def __init__(self, stats: SetStats, pred: Predictor) -> None:
        self.pred = pred
        self.measured = dict(zip(stats.keys.tolist(), stats.mean.tolist(), strict=True))

    def predict_keys(self, keys: np.ndarray) -> np.ndarray:
        lin, _ = self.pred.linear(np.asarray(keys, dtype=np.int64))
        return self.pred.us(lin)

    def __call__(self, key: int) -> tuple[float, bool]:
        if key in self.measured:
            return float(self.measured[key]), True
        return float(self.predict_keys(np.array([key], dtype=np.int64))[0]), False


def forbidden_pairs(ds: Dataset) -> np.ndarray:
    """Pairs the best-set search must not combine: catalog conflicts, and pairs never seen
    together (the model cannot say what they do together)."""
    k = len(ds.factors)
    bad = np.zeros((k, k), bool)
    # distinct sets suffice to know which pairs were ever applied together
    x = rows_of(np.unique(keys_of(ds.x)), k).astype(np.int64)
    together = x.T @ x
    for a, b in combinations(range(k), 2):
        if together[a, b] == 0 or tuple(sorted((ds.factors[a], ds.factors[b]))) in ds.conflicts:
            bad[a, b] = True
    return bad


def shapley(values: Values, base: int, members: list[int]) -> tuple[dict[int, float], int, int]:
    """Exact Shapley values of each member bit for v(base + S), S over subsets of members."""
    d = len(members)
    if d > MAX_EXACT:
        raise PerflabError(
            f"exact Shapley over {d} factors is 2^{d} sets; give at most {MAX_EXACT}"
        )
    subsets = np.arange(1 << d, dtype=np.int64)
    keys = np.full(len(subsets), base, dtype=np.int64)
    for i, bit in enumerate(members):
        keys |= ((subsets >> i) & 1) << bit
    v = values.predict_keys(keys)
    measured = 0
    for n, key in enumerate(keys):
        if int(key) in values.measured:
            v[n] = values.measured[int(key)]
            measured += 1
    size = np.array([bin(int(s)).count("1") for s in subsets])
    fact = [math.factorial(n) for n in range(d + 1)]
    out: dict[int, float] = {}
    for i, bit in enumerate(members):
        without = subsets[(subsets >> i) & 1 == 0]
        w = np.array([fact[s] * fact[d - s - 1] for s in size[without]], float) / fact[d]
        out[bit] = float((w * (v[without | (1 << i)] - v[without])).sum())
    return out, measured, len(subsets)


def rate(t: float) -> float:
    """Tasks per second of ``t`` µs/task; NaN (null in the JSON) where ``t`` is no time: the
    minimum-norm prediction of a set the data cannot estimate may be 0 or below."""
    return 1e6 / t if t > 0 else float("nan")


def path(
    values: Values, ds: Dataset, start: int, goal: list[int], order: str | list[int]
) -> list[dict[str, Any]]:
    """Steps from ``start`` adding each of ``goal``: greedily (best next), by category
    ("nice"), or in a given order. Each step with µs/task and tasks/s."""
    cur = start
    t, measured = values(cur)
    steps: list[dict[str, Any]] = [
        {
            "factor": None,
            "set": ds.names_of(cur),
            "us_per_task": t,
            "tasks_per_s": rate(t),
            "measured": measured,
        }
    ]
    remaining = list(goal)
    while remaining:
        if isinstance(order, list):
            pick = order[len(steps) - 1]
        else:
            pool = remaining
            if order == "nice":
                rank = min(category_rank(ds, ds.factors[j]) for j in remaining)
                pool = [j for j in remaining if category_rank(ds, ds.factors[j]) == rank]
            pick = min(pool, key=lambda j: values(cur | 1 << j)[0])
        remaining.remove(pick)
        prev = t
        cur |= 1 << pick
        t, measured = values(cur)
        steps.append(
            {
                "factor": ds.factors[pick],
                "category": category(ds, ds.factors[pick]),
                "set": ds.names_of(cur),
                "us_per_task": t,
                "tasks_per_s": rate(t),
                "delta_us": t - prev,
                "measured": measured,
            }
        )
    return steps
