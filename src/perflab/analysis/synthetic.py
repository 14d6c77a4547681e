"""Synthetic campaigns whose true effects are known: for testing and benchmarking analysis.

The truth (µs/task, before noise and drift):

* base 1000;
* ``f00`` saves 400 and ``f01`` saves 300, but together they save only 450: an either-or
  pair like two logging factors (interaction contrast +250);
* ``f02`` saves 100, whatever else is applied;
* ``f03`` is state-dependent like ``affinity`` (CPU pinning): it saves 100 on a slow run
  (T >= 500 without it) and costs 50 on a fast one;
* every further factor does nothing (null factors);
* noise is multiplicative (``noise`` × T, normal), and drift adds ``drift_per_hour`` µs per
  hour over a campaign of ``hours``.
"""

from __future__ import annotations

from datetime import UTC, datetime

import numpy as np
import pandas as pd

BASE = 1000.0
MAIN = {0: -400.0, 1: -300.0, 2: -100.0}
PAIR = ((0, 1), 250.0)


def names(k: int) -> list[str]:
    return [f"f{j:02d}" for j in range(k)]


def truth(x: np.ndarray) -> np.ndarray:
    """True µs/task of 0/1 rows (n x k), k >= 4."""
    x = x.astype(float)
    t = BASE + sum(b * x[:, j] for j, b in MAIN.items())
    (a, b), inter = PAIR
    t = t + inter * x[:, a] * x[:, b]
    return t + np.where(t >= 500, -100.0, 50.0) * x[:, 3]


def generate(
    runs: int,
    k: int = 8,
    seed: int = 0,
    design: str = "random",
    noise: float = 0.05,
    drift_per_hour: float = 0.0,
    hours: float = 100.0,
    replicates: int = 1,
) -> pd.DataFrame:
    """A dataset frame (perflab.campaign.dataset columns) of ``runs`` runs over ``k`` factors.

    Each distinct set is run ``replicates`` times.
    ``design``: ``random`` (each factor on with p=1/2) or ``sequences`` (cumulative random
    orderings, k+1 nested sets each, as the ``sequences`` design makes).
    """
    if k < 4:
        raise ValueError("the synthetic truth needs at least 4 factors")
    if replicates < 1:
        raise ValueError("replicates: how many times each set is run, at least 1")
    rng = np.random.default_rng(seed)
    if design == "random":
        distinct = max(1, runs // replicates)
        base_rows = rng.integers(0, 2, size=(distinct, k), dtype=np.int8)
    elif design == "sequences":
        n_seq = max(1, runs // (replicates * (k + 1)))
        order = np.argsort(rng.random((n_seq, k)), axis=1)
        steps = np.arange(k + 1)
        # row (s, i): the first i factors of sequence s are on
        rank = np.empty_like(order)
        np.put_along_axis(rank, order, np.arange(k)[None, :].repeat(n_seq, 0), axis=1)
        base_rows = (rank[:, None, :] < steps[None, :, None]).reshape(-1, k).astype(np.int8)
    else:
        raise ValueError(f"unknown synthetic design {design!r}")
    orders = [[f"f{j:02d}" for j in row] for row in order] if design == "sequences" else []
    x = np.tile(base_rows, (replicates, 1))[:runs]
    x = x[rng.permutation(len(x))]
    n = len(x)
    t0 = datetime(2026, 1, 1, tzinfo=UTC).timestamp()
    ts = np.sort(t0 + rng.random(n) * hours * 3600)
    y = truth(x) * (1 + noise * rng.standard_normal(n)) + drift_per_hour * (ts - t0) / 3600
    df = pd.DataFrame(x, columns=names(k))
    df.insert(0, "run_id", [f"r{i}" for i in range(n)])
    df.insert(1, "timestamp", ts)
    df.insert(2, "status", "ok")
    df.insert(3, "us_per_task", y)
    df.attrs["sequences"] = orders  # the cumulative orders, for path analyses
    return df
