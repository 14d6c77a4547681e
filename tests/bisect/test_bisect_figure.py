"""The bisection's figure: each measured point's level chained from the comparisons (exact on
noise-free comparisons), its interval, the culprit's red line, and the page showing the PNG."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from perflab.bisect.driver import Point
from perflab.bisect.figure import draw, levels
from perflab.bisect.page import page
from perflab.bisect.render import stage_dict
from perflab.bisect.search import Step, bisect
from perflab.spec import RunSpec

COSTS = [1.0] * 9 + [1.25] * 8  # the step at point 9


def _stage(costs: list[float], half: float = 1.04) -> dict:
    def measure(a: int, b: int, level: float) -> Step:
        r = costs[b] / costs[a]
        verdict = "slower" if r >= 1.05 else "no difference"
        return Step(a, b, r, r / half, r * half, verdict, 8, level)

    search = bisect(len(costs), measure, max_culprits=2)
    points = [Point(f"{k}.0", f"toy {k}.0", lambda: RunSpec(), {"version": f"{k}.0"})
              for k in range(len(costs))]  # fmt: skip
    return stage_dict("releases", points, search, {})


def test_levels_chain_the_ratios_and_add_the_half_widths() -> None:
    st = _stage(COSTS)
    lv = levels(st)
    assert set(lv) == {s["a"] for s in st["steps"]} | {s["b"] for s in st["steps"]}
    for i, (log_level, half) in lv.items():
        assert math.exp(log_level) == pytest.approx(COSTS[i] / COSTS[0], rel=1e-12)
        hops = half / math.log(1.04)  # the comparisons chained to reach the point
        assert hops == pytest.approx(round(hops), abs=1e-9) and (round(hops) >= 1) == (i != 0)
    assert lv[16][1] == pytest.approx(math.log(1.04))  # the bad end: one comparison away


def _red_pixels(path: Path) -> int:
    from matplotlib.image import imread

    img = imread(path)[:, :, :3]
    red = np.array([0xC0, 0x39, 0x2B]) / 255
    return int((np.abs(img - red).max(axis=2) < 0.08).sum())


def test_the_png_marks_the_culprit_and_the_page_shows_it(tmp_path: Path) -> None:
    st = _stage(COSTS)
    assert [c["index"] for c in st["culprits"]] == [9]
    png = draw(st, "us_per_task", tmp_path / "bisect-1-releases.png")
    assert png is not None and png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert _red_pixels(png) > 100
    st["figure"] = png.name
    result = {"package": "toy", "good": "0.0", "bad": "16.0", "metric": "us_per_task",
              "stages": [st], "state": "s", "reused": 0}  # fmt: skip
    assert "<img src='bisect-1-releases.png'" in page(result)


def test_no_culprit_no_red_line_and_no_comparison_no_figure(tmp_path: Path) -> None:
    flat = _stage([1.0] * 5)
    assert flat["outcome"] == "no step"
    png = draw(flat, "us_per_task", tmp_path / "flat.png")
    assert png is not None and _red_pixels(png) == 0
    flat["steps"] = []
    assert draw(flat, "us_per_task", tmp_path / "none.png") is None
    assert not (tmp_path / "none.png").exists()
