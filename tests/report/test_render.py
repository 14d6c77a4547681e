"""Figures drawn once into PNG and SVG, dense point layers rasterised in the SVG only, and
the same files whether drawn in worker processes or in this one."""

from __future__ import annotations

import warnings
from pathlib import Path

from perflab.analysis import synthetic
from perflab.analysis.data import from_frame
from perflab.report import render
from perflab.report.context import build


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
    assert skipped_one == skipped_two == ["1_means_keep_logs"]  # no logging factor here
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
