"""The interactive page in headless Chromium: offline (no request but the page), a strict
script CSP, and what is drawn follows the chosen factor and colour; hovering shows runs."""

from __future__ import annotations

import re
import warnings
from pathlib import Path

import pytest

from conftest import CHROMIUM, ready_page
from perflab.analysis import synthetic
from perflab.analysis.data import from_frame
from perflab.report import interactive
from perflab.report.assemble import build

pytestmark = [
    pytest.mark.skipif(CHROMIUM is None, reason="scripts/setup installs Debian's chromium"),
    pytest.mark.skipif(not interactive.available(), reason="vl-convert-python not installed"),
]

NAMES = {"f00": "cfg_noop_logging", "f03": "affinity"}


def test_pick_factor_and_colour_then_hover_a_point(tmp_path: Path) -> None:
    # 48 runs of 64 possible sets: factors have different numbers of exact pairs
    df = synthetic.generate(48, k=6, seed=1).rename(columns=NAMES)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ctx = build(from_frame(df), df)
    page_path = interactive.write_interactive(ctx, tmp_path, "affinity", "cfg_noop_logging")
    assert page_path is not None
    text = page_path.read_text()
    csp = re.search(r'Content-Security-Policy" content="([^"]+)"', text)
    assert csp and "script-src 'sha256-" in csp.group(1)
    assert "unsafe-eval" not in csp.group(1) and "default-src 'none'" in csp.group(1)
    pairs = ctx.deltas["factor"].value_counts()
    assert pairs["affinity"] != pairs["f02"]  # so a switch of factor shows in the count

    requests: list[str] = []
    errors: list[str] = []
    with ready_page(page_path.as_uri(), requests, errors) as page:

        def drawn() -> tuple[int, list[str]]:
            page.wait_for_timeout(300)
            n = page.eval_on_selector_all("#vis .mark-symbol.role-mark path", "e => e.length")
            legend = page.eval_on_selector_all(
                "#vis .role-legend-label text", "e => e.map(t => t.textContent)"
            )
            return n, sorted(legend)

        assert drawn() == (pairs["affinity"], ["no", "yes"])
        page.select_option("select[name=factor]", "f02")
        assert drawn() == (pairs["f02"], ["no", "yes"])
        page.select_option("select[name=colour_by]", "(none)")
        assert drawn() == (pairs["f02"], ["all pairs"])

        # hover a point: its sets and run ids (synthetic runs are r0, r1, ...)
        point = page.query_selector("#vis .mark-symbol.role-mark path")
        assert point is not None
        point.hover()
        page.wait_for_selector("#vg-tooltip-element.visible", timeout=5_000)
        tip = page.inner_text("#vg-tooltip-element")
        assert "runs of X" in tip and re.search(r"\br\d+\b", tip), tip
        page.screenshot(path=str(tmp_path / "interactive.png"))
    assert [u for u in requests if u != page_path.as_uri()] == []
    assert errors == []
