"""PCA of path vectors from any dataset with exact X -> X+{t} chains from the untreated set
(reconstructed paths, said so), and none (with the reason in the report) otherwise."""

from __future__ import annotations

import warnings

import numpy as np

from perflab.analysis import analyze, synthetic
from perflab.analysis.data import StudyMeta, from_frame
from perflab.analysis.pca import reconstructed_chains
from perflab.report import render
from perflab.report.assemble import build


def _quiet_analyze(ds):  # type: ignore[no-untyped-def]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return analyze(ds)


def test_an_imported_sequences_dataset_gets_reconstructed_paths_through_its_orders() -> None:
    df = synthetic.generate(126, k=6, seed=4, design="sequences")  # 18 orders of 6 steps
    orders = df.attrs["sequences"]
    ds = from_frame(df)  # as imported from a CSV: no orders known
    assert ds.sequences == []
    a = _quiet_analyze(ds)
    pca = a["pca"]
    assert pca is not None and pca["source"] == "reconstructed"
    assert "reconstructed" in pca["note"]
    chains = reconstructed_chains(ds, a.values)
    assert len(chains) == pca["n_vectors"] >= 3
    idx = {f: j for j, f in enumerate(ds.factors)}
    as_chains = {tuple(idx[f] for f in order) for order in orders}
    # every chain is exact (each step one factor, every set measured) and maximal
    measured = a.values.measured
    for chain in chains:
        cur = 0
        for j in chain:
            assert not cur >> j & 1 and (cur | 1 << j) in measured
            cur |= 1 << j
        assert all(cur >> j & 1 or (cur | 1 << j) not in measured for j in range(6))
    # the campaign's own orders are among them (each is such a chain)
    assert len(as_chains & {tuple(c) for c in chains}) >= len(as_chains) // 2
    # the same dataset with its orders known: the sequences' PCA, said so
    known = from_frame(df, meta=StudyMeta(sequences=orders))
    assert _quiet_analyze(known)["pca"]["source"] == "sequences"


def test_vectors_are_the_deltas_along_each_chain() -> None:
    df = synthetic.generate(70, k=5, seed=5, design="sequences")
    ds = from_frame(df)
    a = _quiet_analyze(ds)
    chains = reconstructed_chains(ds, a.values)
    m = a.values.measured
    first = chains[0]
    cur, total = 0, 0.0
    for j in first:
        total += m[cur | 1 << j] - m[cur]
        cur |= 1 << j
    assert np.isclose(total, m[cur] - m[0])  # the steps telescope to the path's whole change


def test_a_dataset_without_chains_gets_no_pca_and_the_report_says_why(tmp_path) -> None:  # type: ignore[no-untyped-def]
    df = synthetic.generate(200, k=16, seed=6)  # random sets of 16 factors: no chain from ∅
    ds = from_frame(df)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ctx = build(ds, df)
    assert ctx.analysis["pca"] is None
    _, skipped = render.render_figures(ctx, tmp_path, workers=1, names=["8_pca_biplot"])
    assert "reconstructed" in skipped[0]["reason"]
