"""Figures drawn once into PNG and SVG, dense point layers rasterised in the SVG only, and
the same files whether drawn in worker processes or in this one."""

from __future__ import annotations

import warnings
from pathlib import Path

from perflab.analysis import synthetic
from perflab.analysis.data import from_frame
from perflab.report import render
from perflab.report.assemble import build


def test_parallel_drawing_writes_the_same_figures_and_rasterises_dense_layers(
    tmp_path: Path,
) -> None:
    df = synthetic.generate(2400, k=4, seed=2, design="random", replicates=3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ctx = build(from_frame(df), df)
    names = ["1_means", "1_means_keep_logs", "4_lm6", "4_lm6_tiles", "shapley"]
    one, skipped_one = render.render_figures(ctx, tmp_path / "one", workers=1, names=names)
    two, skipped_two = render.render_figures(ctx, tmp_path / "two", workers=2, names=names)
    drawn = ["1_means", "4_lm6", "4_lm6_tiles", "shapley"]
    assert [d["name"] for d in one] == [d["name"] for d in two] == drawn
    assert skipped_one == skipped_two
    assert [s["name"] for s in skipped_one] == ["1_means_keep_logs"]  # no logging factor here
    assert "logging" in skipped_one[0]["reason"]
    assert all(d["png"] for d in two)
    for d in one:
        for ext in ("png", "svg"):
            assert (tmp_path / "two" / f"{d['name']}.{ext}").stat().st_size > 1000
    # 2,400 runs give more than RASTER_POINTS measured-vs-predicted points: one bitmap in the
    # SVG instead of a path per point; a bar chart stays all vectors
    lm = (tmp_path / "one" / "4_lm6.svg").read_text()
    bars = (tmp_path / "one" / "1_means.svg").read_text()
    assert "<image" in lm and lm.count("<use ") < render.RASTER_POINTS
    assert "<image" not in bars
    # the colour bar's gradient is a bitmap too (as vectors: gradients per triangle, ~2 MB)
    tiles = (tmp_path / "one" / "4_lm6_tiles.svg").read_text()
    assert "<image" in tiles and "linearGradient" not in tiles


def test_uniform_point_layers_get_single_settings_and_others_keep_theirs() -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    fig, ax = plt.subplots()
    n = 500
    xy = np.random.default_rng(0).random((n, 2))
    same = ax.scatter(*xy.T, s=[4.0] * n, c=[(0, 0, 0, 0.3)] * n, linewidths=[0.5] * n)
    grey = np.linspace(0, 1, n)
    mixed = ax.scatter(*xy.T, s=[4.0] * n, c=np.c_[grey, grey, grey], linewidths=[0.5] * n)
    mapped = ax.scatter(*xy.T, s=[4.0] * n, c=grey, linewidths=[0.5] * n)  # colours at draw
    render._uniform_points(fig)
    assert len(mapped.get_sizes()) == n
    assert len(same.get_facecolors()) == len(same.get_sizes()) == 1
    assert np.allclose(same.get_facecolors()[0], (0, 0, 0, 0.3)) and same.get_sizes()[0] == 4.0
    assert len(same.get_linewidths()) == 1 and len(same.get_offsets()) == n
    assert len(mixed.get_facecolors()) == n and len(mixed.get_sizes()) == n
    plt.close(fig)
