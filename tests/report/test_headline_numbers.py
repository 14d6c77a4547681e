"""One owner for the headline numbers: the terminal, the HTML page and the JSON print the
analysis' ``summary`` and nothing else, and its numbers agree with one another."""

from __future__ import annotations

import html as html_lib
import json
import math
import re
import warnings
from pathlib import Path

import pytest
from test_figure_integrity import demo_like_frame

from perflab.analysis import analyze
from perflab.campaign.source import open_source
from perflab.report.html import write_report
from perflab.report.terminal import print_analysis


def _numbers(text: str) -> list[float]:
    return [float(v.replace(",", "")) for v in re.findall(r"\d[\d,]*\.\d+", text)]


def test_terminal_html_and_json_print_the_same_headline(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    csv = tmp_path / "demo.csv"
    demo_like_frame().to_csv(csv, sep=";", index=False)
    src = open_source(str(csv))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ds = src.dataset()
        a = analyze(ds).to_json()
        write_report(ds, src.runs, tmp_path / "report", "demo")
    sm = json.loads((tmp_path / "report" / "analysis.json").read_text())["summary"]
    assert sm == json.loads(json.dumps(a["summary"]))
    # the numbers agree with one another: the speed-up is base / best, inside its interval
    assert math.isclose(sm["base_us"] / sm["best_us"], sm["speedup"], rel_tol=1e-9)
    lo, hi = sm["speedup_ci"]
    assert lo < sm["speedup"] < hi
    assert sm["base_measured_us"] is not None  # the untreated set was run: shown beside it

    monkeypatch.setenv("COLUMNS", "200")  # one line each, to find them whole
    print_analysis(a)
    terminal = capsys.readouterr().out
    page = html_lib.unescape((tmp_path / "report" / "report.html").read_text())
    for label, text in sm["lines"].items():
        assert f"{label}: {text}" in terminal
        assert re.search(rf'data-key="{re.escape(label)}">{re.escape(text)}</td>', page)
    # what is printed, read back: base / best equals the printed speed-up to its 2 decimals
    base = _numbers(sm["lines"]["untreated"])[0]
    best = _numbers(sm["lines"]["best"])[0]
    speedup = _numbers(sm["lines"]["speed-up"])[0]
    assert abs(base / best - speedup) <= 0.005 + 1e-9
    # no other speed-up is printed anywhere: every "N.NNx"/"N.NN×" is the summary's
    shown = set(re.findall(r"(\d+\.\d\d)[x×]", terminal + page))
    assert shown <= {f"{speedup:.2f}", f"{lo:.2f}", f"{hi:.2f}"}, shown
