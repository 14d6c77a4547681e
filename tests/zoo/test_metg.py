"""METG on synthetic systems with known truth, and the zoo's table."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from perflab import PerflabError
from perflab.analysis.metg import metg, metg_of
from perflab.analysis.zoo import rows_for_table, zoo_table

#: A system with a fixed overhead per task on 2 cores: efficiency = w / (w + o).
OVERHEAD_US = 200.0


def _runs(levels: list[float], reps: int = 4, noise: float = 0.0, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    rows = []
    for w in levels:
        for _ in range(reps):
            n = 100
            wall = n * (w + OVERHEAD_US) / 2 / 1e6 * (1 + noise * rng.standard_normal())
            rows.append(
                {"task_us": w, "tasks": n, "wall_s": wall, "slots": 2,
                 "efficiency": n * w / 2 / 1e6 / wall}
            )  # fmt: skip
    return pd.DataFrame(rows)


def test_metg_is_where_efficiency_halves() -> None:
    # efficiency 0.5 at w = o: granularity = w + o = 400 µs
    levels = list(np.geomspace(10, 10000, 25))
    m = metg(_runs(levels), basis="peak")
    assert m["status"] == "crossing"
    assert m["metg_us"] == pytest.approx(2 * OVERHEAD_US, rel=0.02)


def test_the_metg_interval_covers_the_truth_under_noise() -> None:
    levels = list(np.geomspace(10, 10000, 13))
    hits = 0
    for seed in range(10):
        m = metg(_runs(levels, noise=0.05, seed=seed), basis="peak")
        hits += m["ci_low"] <= 2 * OVERHEAD_US <= m["ci_high"]
    assert hits >= 8


def test_never_reaching_or_always_reaching_the_threshold_is_said() -> None:
    assert metg_of(np.array([100.0, 10.0]), np.array([0.3, 0.1]), 0.5) == (None, "below")
    assert metg_of(np.array([100.0, 10.0]), np.array([0.9, 0.8]), 0.5) == (10.0, "upper")


def test_bad_metg_input() -> None:
    with pytest.raises(PerflabError, match="threshold must be in"):
        metg(_runs([10, 100]), threshold=1.5)
    with pytest.raises(PerflabError, match="basis 'best' is not one of"):
        metg(_runs([10, 100]), basis="best")


def test_the_zoo_table_has_metg_and_pattern_cells_per_engine() -> None:
    runs = _runs([10, 100, 1000, 10000])
    runs["target"], runs["kind"], runs["status"], runs["error"] = "e1", "metg", "ok", None
    chain = pd.DataFrame(
        {"target": "e1", "kind": "chain", "task_us": 0.0, "tasks": 1000, "wall_s": [1.0, 1.2],
         "slots": 2, "efficiency": 0.0, "tasks_per_s": [1000.0, 833.3],
         "latency_per_level_s": [1e-3, 1.2e-3], "ideal_s": 0.0, "status": "ok", "error": None}
    )  # fmt: skip
    table = zoo_table(pd.concat([runs, chain], ignore_index=True))
    (row,) = rows_for_table(table)
    assert row["target"] == "e1" and row["metg_status"] == "crossing"
    assert row["chain.latency_per_level_s"] == pytest.approx(1.1e-3)
    lo, hi = row["chain.latency_per_level_s_ci"]
    assert lo <= 1.1e-3 <= hi
