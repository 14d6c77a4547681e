"""The site's HTML, pure: a page frame with a strict CSP (scripts allowed by their hashes
only, nothing fetched), sparklines as inline SVG, and the Vega-Lite spec of a benchmark's
series with its steps marked."""

from __future__ import annotations

import base64
import hashlib
import html
import json
import math
from typing import Any

STYLE = (
    "body{font-family:system-ui,sans-serif;margin:2em auto;max-width:1100px;color:#222}"
    "table{border-collapse:collapse}td,th{border-bottom:1px solid #ddd;padding:.2em .6em;"
    "text-align:left}.slower{color:#b00}.faster{color:#070}code{font-size:90%}"
)


def esc(v: Any) -> str:
    return html.escape(str(v))


def _sha(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode() + "'"


def page(title: str, body: str, scripts: list[str] = ()) -> str:  # type: ignore[assignment]
    """A whole page: ``scripts`` inline, each allowed by its hash and nothing else."""
    csp = "default-src 'none'; img-src data:; style-src 'unsafe-inline'; script-src " + (
        " ".join(_sha(s) for s in scripts) or "'none'"
    )
    tags = "".join(f"<script>{s}</script>" for s in scripts)
    return (
        '<!doctype html><html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{csp}">'
        f"<title>{esc(title)}</title><style>{STYLE}</style></head><body>"
        '<nav><a href="index.html">atlas</a> · <a href="regressions.html">regressions</a> · '
        f'<a href="feed.xml">feed</a></nav><h1>{esc(title)}</h1>{body}{tags}</body></html>'
    )


def sparkline(values: list[float], width: int = 160, height: int = 28) -> str:
    """The series as an inline SVG polyline (empty when fewer than two values)."""
    if len(values) < 2:
        return ""
    lo, hi = min(values), max(values)
    span = (hi - lo) or 1.0
    pts = " ".join(
        f"{i * width / (len(values) - 1):.1f},{height - 2 - (v - lo) / span * (height - 4):.1f}"
        for i, v in enumerate(values)
    )
    return (
        f'<svg class="spark" width="{width}" height="{height}" role="img" '
        f'aria-label="series"><polyline fill="none" stroke="#36c" points="{pts}"/></svg>'
    )


def table(head: list[str], rows: list[list[str]]) -> str:
    """An HTML table; cells are already HTML."""
    th = "".join(f"<th>{esc(h)}</th>" for h in head)
    body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in r) + "</tr>" for r in rows)
    return f"<table><thead><tr>{th}</tr></thead><tbody>{body}</tbody></table>"


def ratio_text(s: dict[str, Any]) -> str:
    if s.get("ratio") is None:
        return ""
    ci = (
        f" ({s['low']:.3f}–{s['high']:.3f})"
        if s.get("low") is not None and math.isfinite(s["low"]) and math.isfinite(s["high"])
        else ""
    )
    return f'<span class="{esc(s["direction"])}">{s["ratio"]:.3f}×{ci}</span>'


def series_spec(
    name: str, metric: str, rows: list[dict[str, Any]], steps: list[dict[str, Any]]
) -> dict[str, Any]:
    """Vega-Lite: each measured point's geometric mean with its runs' range, by commit
    order; a rule at each step (red slower, green faster)."""
    return {
        "$schema": "https://vega.github.io/schema/vega-lite/v5.json",
        "width": 900,
        "height": 300,
        "title": f"{name}: {metric} by commit",
        "layer": [
            {
                "data": {"values": rows},
                "mark": {"type": "rule", "color": "#9ab"},
                "encoding": {
                    "x": {"field": "ord", "type": "quantitative", "title": "commit (order)"},
                    "y": {"field": "low", "type": "quantitative"},
                    "y2": {"field": "high"},
                },
            },
            {
                "data": {"values": rows},
                "mark": {"type": "point", "filled": True},
                "encoding": {
                    "x": {"field": "ord", "type": "quantitative"},
                    "y": {
                        "field": "mean",
                        "type": "quantitative",
                        "title": metric,
                        "scale": {"zero": False},
                    },
                    "tooltip": [
                        {"field": "label"},
                        {"field": "subject"},
                        {"field": "mean"},
                        {"field": "runs"},
                    ],
                },
            },
            {
                "data": {"values": steps},
                "mark": {"type": "rule", "strokeDash": [4, 3]},
                "encoding": {
                    "x": {"field": "ord", "type": "quantitative"},
                    "color": {
                        "field": "direction",
                        "type": "nominal",
                        "scale": {"domain": ["slower", "faster"], "range": ["#c00", "#090"]},
                    },
                    "tooltip": [{"field": "id"}, {"field": "state"}, {"field": "ratio"}],
                },
            },
        ],
    }


def vega_app(spec: dict[str, Any]) -> str:
    """The page's own script: draw ``spec`` into #vis, then mark the body ready."""
    data = json.dumps(spec).replace("</", "<\\/")
    return (
        f"const spec = {data};\n"
        "vegaEmbed('#vis', spec, {actions: false, ast: true, renderer: 'svg'})"
        ".then(r => { window.view = r.view; document.body.dataset.ready = 'yes'; })"
        ".catch(e => { document.body.dataset.ready = 'failed'; console.error(String(e)); });"
    )
