"""The analysis's claims hold on synthetic truths (fixed seeds).

The truth is ``perflab.analysis.synthetic``'s (f00..f03 act, f04.. are null); campaigns are
built by ``bench/validity.py``'s helpers so the tests and the bench measure the same thing.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from perflab.analysis import analyze, from_frame
from perflab.analysis.bestset import recommend
from perflab.analysis.claims import Predictor
from perflab.analysis.models import infer

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
import validity  # noqa: E402

synthetic = validity.synthetic
NULLS = synthetic.names(12)[validity.NULL_FROM :]


def _infer(df):
    names = [c for c in df.columns if c.startswith("f")]
    return infer(
        df["us_per_task"].to_numpy(), df[names].to_numpy(), names, df["timestamp"].to_numpy()
    )


@pytest.mark.parametrize("design", ["random", "doptimal", "sequences"])
def test_null_factor_intervals_cover_zero(design: str) -> None:
    covered = total = 0
    for seed in range(25):
        inf = _infer(validity.frame_from(validity.design_rows(design, 12, seed), seed))
        for f in NULLS:
            v = inf.factors[f]
            covered += v["ci_low"] <= 0 <= v["ci_high"]
            total += 1
    assert total == 200
    assert covered / total >= 0.92, covered / total


def test_interaction_false_discoveries_and_null_factor_claims() -> None:
    sig = null_sig = clean = 0
    for s in range(50):
        rng = np.random.default_rng(500 + s)
        runs = int(rng.integers(256, 301))
        inf = _infer(validity.frame_from(rng.integers(0, 2, (runs, 12)), 500 + s, noise=0.05))
        for r in inf.interactions:
            if r["significant"]:
                sig += 1
                null_sig += validity.is_null_pair(r["a"], r["b"])
        clean += not any(inf.factors[f]["significant"] for f in NULLS)
    assert sig > 20  # the real interactions are found
    assert null_sig / sig <= 0.10, (null_sig, sig)
    assert clean / 50 >= 0.90


def test_permuting_factors_changes_nothing_on_a_resolution_iv_design() -> None:
    x = np.tile(validity.resolution_iv(20), (4, 1))
    df = validity.frame_from(x, 7)
    names = synthetic.names(20)
    a = analyze(from_frame(df), n_boot=50).to_json()
    b = analyze(from_frame(df[[*df.columns[:4], *names[::-1]]]), n_boot=50).to_json()
    assert validity.named(a) == validity.named(b)
    assert set(a["best_set"]) == set(b["best_set"])
    for f in names:
        for key in ("effect_us", "ci_low", "ci_high", "p_adj"):
            assert a["factors"][f][key] == pytest.approx(b["factors"][f][key], abs=1e-9)
    chains = {(r["a"], r["b"]): r for r in a["interactions"]}
    top = chains[("f00", "f01")]
    assert top["aliases"] and not top["significant"] and top["p"] is None
    # the chain is the same set of pairs whatever the order
    rev = {(r["a"], r["b"]): r for r in b["interactions"]}
    assert sorted(top["aliases"]) == sorted(
        " x ".join(sorted(n.split(" x "))) for n in rev[("f01", "f00")]["aliases"]
    )


def test_best_set_speedup_interval_covers_the_true_speedup() -> None:
    covered = 0
    seeds = 20
    for s in range(seeds):
        x = np.tile(np.random.default_rng(900 + s).integers(0, 2, (100, 8)), (3, 1))
        df = validity.frame_from(x, 900 + s, noise=0.05)
        inf = _infer(df)
        names = synthetic.names(8)
        rec = recommend(Predictor(inf.fits[inf.chosen], 8), names, np.zeros((8, 8), bool), [])
        chosen = np.array([[rec["key"] >> j & 1 for j in range(8)]])
        true = float(synthetic.truth(np.zeros((1, 8)))[0] / synthetic.truth(chosen)[0])
        lo, hi = rec["speedup"]["ci"]
        covered += lo <= true <= hi
    assert covered / seeds >= 0.90


def test_demo_shaped_data_headlines_no_unsupported_interaction() -> None:
    for s in range(8):
        rows = validity.design_rows("sequences", 6, 300 + s)[: 4 * 7]
        a = analyze(from_frame(validity.frame_from(rows, 300 + s, noise=0.05)), n_boot=50).to_json()
        top = a["headline"]["interaction"]
        assert top is None or top["significant"], top
        if top is None:
            assert "assessable" in a["headline"]["text"] or "correction" in a["headline"]["text"]
