"""``atlas publish`` in headless Chromium from file://: every page loads with nothing fetched
but the site's own files, the benchmark's chart draws every measured point and marks every
step; regressions.json and the Atom feed hold the steps."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from atlasrepo import private_home  # noqa: F401
from test_atlas_update import make, simulated

from conftest import CHROMIUM, ready_page
from perflab.atlas.site import publish
from perflab.atlas.store import Store
from perflab.atlas.update import open_atlas, update
from perflab.report import interactive

pytestmark = [
    pytest.mark.skipif(CHROMIUM is None, reason="scripts/setup installs Debian's chromium"),
    pytest.mark.skipif(not interactive.available(), reason="vl-convert-python not installed"),
]


def test_the_site_works_offline_and_draws_the_series_and_steps(tmp_path: Path) -> None:
    repo, d, shas = make(tmp_path)
    update(d, measurer=simulated(repo, shas, 11))
    _, atlas, store = open_atlas(d)
    site = tmp_path / "site"
    publish(atlas, store, site)
    steps = Store(d).steps("score")
    regs = json.loads((site / "regressions.json").read_text())["regressions"]
    assert {r["id"] for r in regs} == {s.id for s in steps if s.direction == "slower"}
    feed = ET.parse(site / "feed.xml").getroot()
    assert len(feed.findall("{http://www.w3.org/2005/Atom}entry")) == len(steps)
    requests: list[str] = []
    errors: list[str] = []
    with ready_page((site / "bench-score.html").as_uri(), requests, errors) as page:
        dots = page.eval_on_selector_all("#vis .mark-symbol.role-mark path", "e => e.length")
        assert dots == 59  # 60 commits, one does not build
        for name in ("index.html", "regressions.html", f"step-{steps[0].id}.html"):
            page.goto((site / name).as_uri())
            assert page.title()
        page.goto((site / "index.html").as_uri())
        assert page.eval_on_selector_all("svg.spark polyline", "e => e.length") == 1
    assert errors == []
    assert all(u.startswith("file://") for u in requests), requests
