"""Other people's strings reach neither the terminal's escape parser nor a page's scripts."""

from __future__ import annotations

import io
import random
from pathlib import Path

from conftest import ROOT, perflab
from perflab.display import CSP, PrintableStream, printable

#: An OSC hyperlink/title opener, a bell and clear-screen: what a hostile level might hold.
HOSTILE = "\x1b]8\x07\x1b[2J"


def test_printable_escapes_foreign_sequences_and_keeps_colours() -> None:
    assert printable("a\x1b]0;title\x07b") == "a\\x1b]0;title\\x07b"
    assert printable("x\x1b[2Jy\x9bz") == "x\\x1b[2Jy\\x9bz"
    # rich's own colours and a progress bar's cursor moves stay
    assert printable("\x1b[1;31mred\x1b[0m\r\x1b[2K\x1b[1A\tok\n") == (
        "\x1b[1;31mred\x1b[0m\r\x1b[2K\x1b[1A\tok\n"
    )
    buf = io.StringIO()
    stream = PrintableStream(buf)  # type: ignore[arg-type]
    assert stream.write("\x1b]52;c;cHduZWQ=\x07") == len("\x1b]52;c;cHduZWQ=\x07")
    assert "\x1b" not in buf.getvalue() and "\x07" not in buf.getvalue()


def test_an_imported_level_with_escape_sequences_is_printed_escaped(tmp_path: Path) -> None:
    rng = random.Random(1)
    rows = ["run_id;timestamp;status;us_per_task;treatments"]
    for i in range(16):
        t = (["fa"] if i % 2 else []) + ([f"fb={HOSTILE}"] if (i // 2) % 2 else [])
        us = 100 + 20 * (i % 2) + rng.random() * 10
        rows.append(f"r{i};{1767225641 + i};ok;{us};{','.join(t)}")
    (tmp_path / "d.csv").write_text("\n".join(rows) + "\n")
    assert perflab("import", "d.csv", "c1", cwd=tmp_path).returncode == 0
    for verb in (("analyze", "c1"), ("campaign", "status", "c1")):
        r = perflab(*verb, cwd=tmp_path)
        assert r.returncode == 0, r.stderr
        out = r.stdout + r.stderr
        assert "\x1b]" not in out and "\x1b[2J" not in out and "\x07" not in out
    assert "fb=\\x1b]8" in perflab("analyze", "c1", cwd=tmp_path).stdout  # shown, escaped


def test_every_html_page_carries_the_one_csp() -> None:
    from perflab.compare.history import History
    from perflab.compare.render import history_html

    templates = [*(ROOT / "src" / "perflab").rglob("*.html")]
    assert len(templates) >= 3
    for page in templates:
        assert f'content="{CSP}"' in page.read_text(), page
    h = History("parsl", "us_per_task", [], [], threshold=0.05, alpha=0.01)
    assert f'content="{CSP}"' in history_html(h, None)
