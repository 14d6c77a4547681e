"""The report's precision per hour: analysis.json's ``precision`` (beside the analysis
contract) and the page's section, from a synthetic campaign of known noise."""

from __future__ import annotations

import json
import math
import warnings
from pathlib import Path

import numpy as np
import pytest

from perflab.analysis import synthetic
from perflab.analysis.reach import run_seconds
from perflab.campaign.source import open_source
from perflab.report.html import write_report

#: A line ``campaign/source.py`` hands the report for a set stopped early.
STOPPED = "slow: 5 runs not needed, out of the running: 1,900–2,100 (99.17% interval of 3 runs)"


def test_the_report_says_the_precision_reached_and_what_more_runs_buy(tmp_path: Path) -> None:
    csv = tmp_path / "syn.csv"
    frame = synthetic.generate(96, k=4, seed=5, replicates=3, noise=0.05, hours=2.0)
    frame.to_csv(csv, sep=";", index=False)
    src = open_source(str(csv))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ds = src.dataset()
        page = write_report(ds, src.runs, tmp_path / "report", "syn", stopped=[STOPPED])
    p = json.loads((tmp_path / "report" / "analysis.json").read_text())["precision"]
    # a campaign's sets stopped early (campaign run --fastest): said beside the precision
    assert p["stopped"] == [STOPPED] and p["lines"][-1] == STOPPED
    assert p["runs"] == 96 and p["df"] == 96 - len(p["sets"])
    # multiplicative noise of 5 %: the sd of the log is about 0.05 (its ~64 df: ±20 %)
    assert p["pooled_sd_log"] == pytest.approx(0.05, rel=0.2)
    run_s = run_seconds(np.asarray(frame["timestamp"], float))
    assert p["run_s"] == pytest.approx(run_s, rel=1e-3)  # the CSV keeps ms
    for e in p["effects"]:
        assert e["more_hours_predicted"] == pytest.approx(e["more_runs"] * run_s / 3600, rel=1e-3)
    text = page.read_text()
    assert 'id="precision"' in text and "(predicted)" in text and STOPPED in text
    assert f"±{100 * p['target']:.1f}%" in text
    worst = max(e["half_width"] for e in p["effects"])
    assert f"±{worst:.1%}" in text and math.isfinite(worst)
