"""Datasets for the degenerate cases of issue 43 (shared by the tests and the properties)."""

from __future__ import annotations

import itertools

import numpy as np

from perflab.analysis.data import Dataset

T0 = 1.7e9


def dataset(
    sets: list[set[str]],
    factors: list[str],
    reps: int = 2,
    value=lambda s: 100.0,
    noise: float = 0.0,
    seed: int = 0,
    blocks: bool = True,
) -> Dataset:
    """``reps`` rounds of ``sets`` in random order, each run ``value(set)`` times
    (1 + noise·N(0,1)), a campaign's timestamps (seconds apart) and replicate blocks."""
    rng = np.random.default_rng(seed)
    rows, ys, blk = [], [], []
    for r in range(reps):
        for i in rng.permutation(len(sets)):
            s = sets[i]
            rows.append([int(f in s) for f in factors])
            ys.append(value(s) * (1 + noise * rng.standard_normal()))
            blk.append(r)
    n = len(ys)
    t = T0 + np.cumsum(rng.uniform(0.02, 0.06, n))
    x = np.array(rows, np.int8).reshape(n, len(factors))
    # as from_frame does: a factor that never varies is left out
    varied = [j for j in range(len(factors)) if 0 < x[:, j].sum() < n]
    return Dataset(
        y=np.array(ys, float),
        x=x[:, varied],
        factors=[factors[j] for j in varied],
        t=t,
        metric="us_per_task",
        blocks=np.array(blk) if blocks else None,
    )


def full(factors: list[str]) -> list[set[str]]:
    return [set(c) for r in range(len(factors) + 1) for c in itertools.combinations(factors, r)]
