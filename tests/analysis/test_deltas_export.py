"""``perflab export NAME --deltas``: the seed's deltas CSV (docs/contracts.md), whose rows are
the Python API's and from which pandas alone reproduces perflab's mean_delta_us."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from conftest import perflab
from perflab.analysis import analyze, synthetic
from perflab.analysis.data import from_frame
from perflab.analysis.deltas import DELTAS_COLUMNS, naive_deltas, run_pairs


def test_run_pairs_are_every_pair_of_runs_as_the_all_pairs_reference() -> None:
    ds = from_frame(synthetic.generate(240, k=5, seed=1, replicates=3))
    mine = run_pairs(ds)
    ref = naive_deltas(ds)
    by = ["factor", "before", "after"]
    a = mine.sort_values(by).reset_index(drop=True)
    b = ref.sort_values(by).reset_index(drop=True)
    assert len(a) == len(b) > 1000
    assert (a["factor"] == b["factor"]).all()
    assert np.allclose(a[["before", "after", "delta"]], b[["before", "after", "delta"]])
    for f in ds.factors:  # X lacks the row's own factor; others are X's membership
        assert not mine.loc[mine["factor"] == f, f].any()
    assert mine[ds.factors].dtypes.map(pd.api.types.is_bool_dtype).all()


def test_export_deltas_of_a_15000_run_campaign_matches_the_api_and_pandas(
    tmp_path: Path,
) -> None:
    csv, db = tmp_path / "big.csv", str(tmp_path / "s.db")
    # 16 factors, one run per set mostly: exact pairs are sparse, as in the seed's 15,000 runs
    synthetic.generate(15_000, k=16, seed=7).to_csv(csv, sep=";", index=False)
    assert perflab("import", str(csv), "big", "--store", db).returncode == 0
    out = tmp_path / "big.deltas.csv"
    proc = perflab("export", "big", "--deltas", "-o", str(out), "--store", db)
    assert proc.returncode == 0, proc.stderr

    # pandas alone, as the seed's scripts read it
    seen = pd.read_csv(out, sep=";")
    assert list(seen.columns[:4]) == DELTAS_COLUMNS
    assert seen.columns[4:].tolist() == synthetic.names(16)
    assert seen[seen.columns[4:]].dtypes.map(pd.api.types.is_bool_dtype).all()
    mean_delta = seen.groupby("factor")["delta"].mean()

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ds = from_frame(pd.read_csv(csv, sep=";"))
        a = analyze(ds).to_json()
    api = run_pairs(ds)
    assert len(seen) == len(api) > 10_000
    assert (seen["factor"] == api["factor"]).all()
    assert np.allclose(seen[["before", "after", "delta"]], api[["before", "after", "delta"]])
    assert (seen[ds.factors].to_numpy() == api[ds.factors].to_numpy()).all()
    for f, v in a["factors"].items():
        assert np.isclose(mean_delta[f], v["mean_delta_us"], rtol=1e-9), f
        assert (seen["factor"] == f).sum() == v["n_pairs"]


def test_export_deltas_bad_input_is_one_line_and_writes_nothing(tmp_path: Path) -> None:
    db = str(tmp_path / "s.db")
    out = tmp_path / "x.csv"
    for args, says in (
        (["nosuch"], "no campaign 'nosuch'"),
        (["nosuch", "--format", "parquet"], "CSV only"),
    ):
        proc = perflab("export", *args, "--deltas", "-o", str(out), "--store", db)
        assert proc.returncode == 2 and says in proc.stderr, proc.stderr
        assert len(proc.stderr.strip().splitlines()) == 1
        assert not out.exists()
