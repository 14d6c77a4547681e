"""Issue 43: a perfectly collinear pair is said as aliased in the terminal too, as in the JSON
(``aliases``) and the HTML page; the terminal said only "n/a (not assessable)". Both say it
in one wording (``claim_text``): the page said "exploratory (aliased with b)"."""

from __future__ import annotations

import re
from html import unescape
from pathlib import Path

import pandas as pd
import pytest

from perflab.analysis import analyze
from perflab.analysis.data import from_frame
from perflab.report import html as report_html
from perflab.report.terminal import claim_text, print_analysis


def _frame() -> pd.DataFrame:
    # a and b always together (the degenerate table's "collinear pair"), c varied apart
    sets = [(0, 0, 0), (1, 1, 0), (0, 0, 1), (1, 1, 1)] * 3
    noise = [0.0, 1.5, -1.0, 0.5, -0.5, 1.0] * 2
    return pd.DataFrame(
        {
            "run_id": [f"r{i}" for i in range(12)],
            "timestamp": [1.7e9 + i for i in range(12)],
            "status": "ok",
            "us_per_task": [
                100 - 10 * a - 3 * c + e for (a, _, c), e in zip(sets, noise, strict=True)
            ],
            "a": [s[0] for s in sets],
            "b": [s[1] for s in sets],
            "c": [s[2] for s in sets],
        }
    )


def _collinear() -> dict:
    return analyze(from_frame(_frame())).to_json()


def test_the_terminal_names_the_alias_chain(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    a = _collinear()
    assert a["factors"]["a"]["aliases"] == ["b"] and a["factors"]["b"]["aliases"] == ["a"]
    monkeypatch.setenv("COLUMNS", "160")
    print_analysis(a)
    rows = {ln.split("│")[1].strip(): ln for ln in capsys.readouterr().out.splitlines()
            if ln.startswith("│")}  # fmt: skip
    assert "aliased with b" in rows["a"] and "aliased with a" in rows["b"], rows
    assert "exploratory" not in rows["a"]  # no claim of any kind on an inestimable effect
    assert "aliased" not in rows["c"]


def test_the_page_words_a_claim_as_the_terminal_does(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the figures are not what is tested here: drawing them would take most of a minute
    monkeypatch.setattr(report_html, "render_figures", lambda ctx, out: ([], []))
    monkeypatch.setattr(report_html, "write_interactive", lambda *a: None)
    df = _frame()
    page = report_html.write_report(from_frame(df), df, tmp_path, "collinear").read_text()
    table = page.split("<h2>Per-factor effects</h2>")[1].split("</table>")[0]
    row = r"<tr><td>([^<]*)</td>(?:<td[^>]*>[^<]*</td>){3}<td>([^<]*)</td>"
    cells = {unescape(m[0]): unescape(m[1]) for m in re.findall(row, table)}
    a = _collinear()
    assert cells == {f: claim_text(v) for f, v in a["factors"].items()}, cells
    assert cells["a"] == "aliased with b" and cells["b"] == "aliased with a"
