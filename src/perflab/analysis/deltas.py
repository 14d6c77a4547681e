"""Exact-pair deltas: for every factor t, every measured pair of sets X and X+{t}.

Runs are grouped by treatment set (a bitmask) and sets are joined by bit arithmetic and a
sorted search, never by comparing all pairs of runs.  A row is a pair of *sets*; its
``weight`` n_X * n_{X+t} is the number of run pairs it stands for, so the weighted mean of
``delta`` equals the plain mean over every pair of runs.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from perflab.analysis.data import Dataset


def set_means(ds: Dataset) -> pd.DataFrame:
    """Per treatment set (index: bitmask): n, mean, std of the metric."""
    g = pd.DataFrame({"key": ds.keys, "y": ds.y}).groupby("key")["y"]
    return pd.DataFrame({"n": g.size(), "mean": g.mean(), "std": g.std(ddof=1)})


def deltas(ds: Dataset, means: pd.DataFrame | None = None) -> pd.DataFrame:
    means = set_means(ds) if means is None else means
    keys = means.index.to_numpy(dtype=np.int64)  # sorted by groupby
    mean = means["mean"].to_numpy()
    n = means["n"].to_numpy()
    frames = []
    for j, f in enumerate(ds.factors):
        bit = np.int64(1) << j
        before = keys[(keys & bit) == 0]
        after = before | bit
        pos = np.searchsorted(keys, after)
        pos = np.minimum(pos, len(keys) - 1)
        hit = keys[pos] == after
        bi = np.searchsorted(keys, before[hit])
        ai = pos[hit]
        part = pd.DataFrame(
            {
                "factor": f,
                "before": mean[bi],
                "after": mean[ai],
                "delta": mean[ai] - mean[bi],
                "weight": n[bi] * n[ai],
                "base_key": before[hit],
            }
        )
        frames.append(part)
    out = pd.concat(frames, ignore_index=True)
    base = out["base_key"].to_numpy(dtype=np.int64)
    for j, f in enumerate(ds.factors):
        out[f"had_{f}"] = (base >> j & 1).astype(bool)
    return out


def naive_deltas(ds: Dataset) -> pd.DataFrame:
    """All-pairs reference implementation (for tests and the benchmark only): O(runs^2)."""
    rows = []
    x = ds.x.astype(bool)
    for j, f in enumerate(ds.factors):
        without = np.flatnonzero(~x[:, j])
        with_ = np.flatnonzero(x[:, j])
        other = np.delete(x, j, axis=1)
        for i in without:
            same = (other[with_] == other[i]).all(axis=1)
            for k in with_[same]:
                rows.append((f, ds.y[i], ds.y[k], ds.y[k] - ds.y[i]))
    return pd.DataFrame(rows, columns=["factor", "before", "after", "delta"])


#: The deltas CSV's leading columns (docs/contracts.md); one boolean column per factor follows.
DELTAS_COLUMNS = ["factor", "before", "after", "delta"]


def run_pairs(ds: Dataset, d: pd.DataFrame | None = None) -> pd.DataFrame:
    """The deltas frame: one row per pair of *runs* X, X+{t} (the set-level rows of
    ``deltas`` expanded, each standing for ``weight`` run pairs), in the contract's columns:
    factor, before, after, delta (after - before, µs/task), then one boolean per factor,
    whether it was in X (the row's own factor: False, X lacks it).

    The plain mean of ``delta`` over a factor's rows is its ``mean_delta_us``."""
    d = deltas(ds) if d is None else d
    keys = ds.keys
    order = np.argsort(keys, kind="stable")  # runs by set, in dataset order within a set
    sorted_keys = keys[order]
    start = np.searchsorted(sorted_keys, d["base_key"].to_numpy(dtype=np.int64), "left")
    stop = np.searchsorted(sorted_keys, d["base_key"].to_numpy(dtype=np.int64), "right")
    bits = np.array([np.int64(1) << ds.factors.index(f) for f in d["factor"]], dtype=np.int64)
    after_keys = d["base_key"].to_numpy(dtype=np.int64) | bits
    a_start = np.searchsorted(sorted_keys, after_keys, "left")
    a_stop = np.searchsorted(sorted_keys, after_keys, "right")
    b_idx, a_idx, row = [], [], []
    for r in range(len(d)):
        before = order[start[r] : stop[r]]
        after = order[a_start[r] : a_stop[r]]
        b_idx.append(np.repeat(before, len(after)))  # every before run with every after run
        a_idx.append(np.tile(after, len(before)))
        row.append(np.full(len(before) * len(after), r))
    bi = np.concatenate(b_idx) if b_idx else np.zeros(0, dtype=np.int64)
    ai = np.concatenate(a_idx) if a_idx else np.zeros(0, dtype=np.int64)
    ri = np.concatenate(row) if row else np.zeros(0, dtype=np.int64)
    out = pd.DataFrame(
        {
            "factor": d["factor"].to_numpy()[ri],
            "before": ds.y[bi],
            "after": ds.y[ai],
        }
    )
    out["delta"] = out["after"] - out["before"]
    x = ds.x[bi].astype(bool)
    for j, f in enumerate(ds.factors):
        out[f] = x[:, j]
    return out
