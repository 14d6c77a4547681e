"""Issue 38's leftover: ``perflab analyze --metric wall_s`` labelled its numbers "µs/task"
(untreated, best, the effects table, Shapley, the page's effect column). The unit follows the
metric analysed, from one table (``run.record.metric_unit``)."""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
import pytest

from perflab.analysis import analyze
from perflab.analysis.data import from_frame
from perflab.report import html as report_html
from perflab.report.terminal import print_analysis
from perflab.run.record import METRICS, metric_unit


def _frame() -> pd.DataFrame:
    """Wall times near 2 s: a saves 0.3 s, b 0.1 s, c nothing (3 replicates of 2^3)."""
    sets = [(a, b, c) for a in (0, 1) for b in (0, 1) for c in (0, 1)] * 3
    noise = [0.01 * ((7 * i) % 5 - 2) for i in range(len(sets))]
    return pd.DataFrame(
        {
            "run_id": [f"r{i}" for i in range(len(sets))],
            "timestamp": [1.7e9 + i for i in range(len(sets))],
            "status": "ok",
            "wall_s": [
                2.0 - 0.3 * a - 0.1 * b + e for (a, b, _), e in zip(sets, noise, strict=True)
            ],
            "a": [s[0] for s in sets],
            "b": [s[1] for s in sets],
            "c": [s[2] for s in sets],
        }
    )


def test_every_metric_has_a_unit_and_a_foreign_column_is_named() -> None:
    assert metric_unit("us_per_task") == "µs/task" and metric_unit("wall_s") == "s"
    assert all(metric_unit(m) for m in METRICS)
    assert metric_unit("makespan") == "makespan"


def test_analyze_of_wall_s_says_seconds_in_the_terminal(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    a = analyze(from_frame(_frame(), metric="wall_s")).to_json()
    lines = a["summary"]["lines"]
    assert " s predicted" in lines["untreated"] and " s predicted with" in lines["best"]
    monkeypatch.setenv("COLUMNS", "160")
    print_analysis(a)
    out = capsys.readouterr().out
    assert "µs" not in out, out
    assert "per-factor effects (s; negative = faster)" in out
    assert "Shapley attribution of" in out and " s (" in out.split("Shapley attribution of")[1]
    # seconds near 2 are shown to 3 significant digits: a's -0.3 s effect and its interval
    # read as -0.30 .. -0.29, not "-0.3 .. -0.3"
    (row,) = [x for x in out.splitlines() if [c.strip() for c in x.split("│")][1:2] == ["a"]]
    effect, low, high = (float(v) for v in re.findall(r"-?\d+\.\d{2}\b", row)[:3])
    assert low < effect < high and effect == pytest.approx(-0.3, abs=0.02), row
    assert re.search(r"\d\.\d{2} s predicted", lines["best"]), lines["best"]


def test_the_page_says_seconds_too(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # the figures are not what is tested here: drawing them would take most of a minute
    monkeypatch.setattr(report_html, "render_figures", lambda ctx, out: ([], []))
    monkeypatch.setattr(report_html, "write_interactive", lambda *a: None)
    df = _frame()
    page = report_html.write_report(from_frame(df, metric="wall_s"), df, tmp_path, "w")
    text = page.read_text()
    assert "<th>effect s</th>" in text and " s predicted" in text
    assert re.search(r"a \(-0\.\d\d s\)", text) and '<td class="num">-0.30</td>' in text
    assert "µs" not in text.split("<h2>Runs</h2>")[0]


def test_every_figure_labels_the_metric_analysed() -> None:
    # each figure's plot and caption, built but not drawn (drawing takes most of a minute)
    from perflab.report.assemble import build
    from perflab.report.figures import FIGURES, NotDrawn

    df = _frame()
    ctx = build(from_frame(df, metric="wall_s"), df)
    made, said = 0, []
    for name in FIGURES:
        try:
            plot, caption = FIGURES.get(name).make(ctx)
        except NotDrawn as why:
            said.append(str(why))
            continue
        made += 1
        labels = " ".join(str(v) for v in vars(plot.labels).values())
        assert "µs" not in labels + caption, (name, labels, caption)
    assert made >= 8  # the effects, the models, the paths, the runs and the scatters
    assert "tasks/s comes from µs/task; the metric analysed is wall_s" in said
