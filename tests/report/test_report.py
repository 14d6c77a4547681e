"""The report: every figure drawn, opened in a real headless Chromium, fully offline."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import CHROMIUM, SCREENSHOTS, open_in_chromium, perflab
from perflab.analysis import synthetic
from perflab.api import report_on
from perflab.report.figures import FIGURES


def _check(html: Path, tmp_path: Path, name: str) -> dict:
    shot = (SCREENSHOTS or tmp_path) / f"{name}.png"
    shot.parent.mkdir(parents=True, exist_ok=True)
    seen = open_in_chromium(html, shot)
    drawn = len(list((html.parent / "figures").glob("*.png")))
    assert len(seen["images"]) == drawn >= 10
    assert all(ok and width > 0 for ok, width, _ in seen["images"]), seen["images"]
    # the page itself is the only request: figures are inlined, nothing goes to the network
    assert [u for u in seen["requests"] if not u.startswith(("file://", "data:"))] == []
    assert seen["errors"] == []
    assert shot.stat().st_size > 10_000
    return seen


@pytest.mark.slow
@pytest.mark.skipif(CHROMIUM is None, reason="scripts/setup installs Debian's chromium")
def test_report_of_a_seed_shaped_csv_in_chromium(tmp_path: Path) -> None:
    csv = tmp_path / "seed <b>bold<i>.csv"  # a user string that must come out escaped
    synthetic.generate(1800, k=6, seed=2, design="sequences", replicates=2).to_csv(
        csv, sep=";", index=False
    )
    out = tmp_path / "report"
    html = report_on(str(csv), None, out)
    for name in FIGURES:
        png, svg = out / "figures" / f"{name}.png", out / "figures" / f"{name}.svg"
        assert png.exists() == svg.exists()
    assert (out / "figures" / "1_means.svg").read_text().lstrip().startswith(("<?xml", "<svg"))
    text = html.read_text()
    assert "&lt;b&gt;bold&lt;i&gt;" in text and "<b>bold<i>" not in text
    assert "http://" not in text and "https://" not in text
    seen = _check(html, tmp_path, "report_csv")
    assert "<b>bold<i>" in seen["title"] and seen["injected"] == 0
    a = json.loads((out / "analysis.json").read_text())
    assert a["best_set"]


@pytest.mark.slow
@pytest.mark.skipif(CHROMIUM is None, reason="scripts/setup installs Debian's chromium")
def test_report_of_a_live_campaign(tmp_path: Path) -> None:
    score = tmp_path / "score.py"
    score.write_text(
        "import os, random\n"
        "t = set(os.environ['PERFLAB_TREATMENTS'].split(','))\n"
        "s = 1000 - 400 * ('a' in t) - 300 * ('b' in t) + 250 * ('a' in t and 'b' in t)"
        " - 100 * ('c' in t)\n"
        "print(s * random.uniform(0.97, 1.03))\n"
    )
    db = str(tmp_path / "s.db")
    args = ["--store", db]
    assert (
        perflab(
            "campaign",
            "create",
            "live",
            "--metric",
            "us_per_task",
            "--command",
            f"python3 {score}",
            "--factors",
            "a,b,c,d",
            "--design",
            "sequences",
            "--design-opt",
            "sequences=6",
            # once each: 30 runs still draw every figure the page is checked for
            "--runs",
            "1",
            *args,
            cwd=tmp_path,
        ).returncode
        == 0
    )
    assert perflab("campaign", "run", "live", "--json", *args, cwd=tmp_path).returncode == 0
    proc = perflab("report", "live", "-o", str(tmp_path / "r"), *args, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    html = Path(proc.stdout.strip())
    _check(html, tmp_path, "report_live")
    summary = perflab("report", "live", *args, cwd=tmp_path)
    assert summary.returncode == 0 and "Shapley" in summary.stdout


def test_effects_with_unknown_cis_draw_without_error_bars(tmp_path: Path) -> None:
    from perflab.report.figures.effects import _bars, _effects

    a = {
        "factors": {
            "x": {"effect_us": -5.0, "ci_low": None, "ci_high": None, "mean_delta_us": None},
            "y": {"effect_us": 3.0, "ci_low": 1.0, "ci_high": 5.0, "mean_delta_us": 2.0},
        }
    }
    df = _effects(a)
    assert df["lo"].dtype == float and df["lo"].isna().sum() == 1
    from plotnine.exceptions import PlotnineWarning

    with pytest.warns(PlotnineWarning, match="geom_errorbar : Removed 1 rows"):
        _bars(df, "µs/task").save(tmp_path / "bars.png", width=4, height=3, dpi=50, verbose=False)
    assert (tmp_path / "bars.png").stat().st_size > 1000
