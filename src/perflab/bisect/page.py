"""An offline page of a bisection: per stage, every comparison made as a bar over the
points it spans, at its ratio with its interval; culprits as red lines (an inline SVG); and,
when the stage has one, its PNG (``figure``: the metric of each point along the axis)."""

from __future__ import annotations

import html
import math
from typing import Any

W, H, LEFT, TOP = 900, 260, 60, 20


def _svg(st: dict[str, Any]) -> str:
    n = len(st["points"])
    steps = [s for s in st["steps"] if math.isfinite(s["low"]) and math.isfinite(s["high"])]
    ys = [math.log(v) for s in steps for v in (s["low"], s["high"])] or [0.0]
    lo, hi = min([*ys, 0.0]), max([*ys, 0.0])
    span = (hi - lo) or 1.0

    def x(i: float) -> float:
        return LEFT + (W - LEFT - 10) * i / max(1, n - 1)

    def y(v: float) -> float:
        return TOP + (H - TOP - 40) * (hi - math.log(v)) / span

    out = [f'<svg width="{W}" height="{H}" xmlns="http://www.w3.org/2000/svg">',
           f'<line x1="{LEFT}" x2="{W - 10}" y1="{y(1):.1f}" y2="{y(1):.1f}" stroke="#999"/>',
           f'<text x="4" y="{y(1) + 4:.1f}" font-size="11">1.00×</text>']  # fmt: skip
    for s in steps:
        colour = "#c0392b" if s["verdict"] in ("slower", "faster") else "#2c3e50"
        title = html.escape(
            f"{st['points'][s['a']]['label']} → {st['points'][s['b']]['label']}: "
            f"{s['ratio']:.3f}× ({s['low']:.3f}–{s['high']:.3f}) {s['verdict']}, {s['runs']} runs"
        )
        out.append(
            f'<g><title>{title}</title><rect x="{x(s["a"]):.1f}" y="{y(s["high"]):.1f}" '
            f'width="{max(2.0, x(s["b"]) - x(s["a"])):.1f}" '
            f'height="{max(1.0, y(s["low"]) - y(s["high"])):.1f}" fill="{colour}" '
            f'fill-opacity="0.15" stroke="{colour}"/>'
            f'<line x1="{x(s["a"]):.1f}" x2="{x(s["b"]):.1f}" y1="{y(s["ratio"]):.1f}" '
            f'y2="{y(s["ratio"]):.1f}" stroke="{colour}" stroke-width="2"/></g>'
        )
    for c in st["culprits"]:
        xc = (x(c["index"]) + x(c["index"] - 1)) / 2
        out.append(f'<line x1="{xc:.1f}" x2="{xc:.1f}" y1="{TOP}" y2="{H - 40}" '
                   'stroke="#c0392b" stroke-dasharray="4 3"/>')  # fmt: skip
    for i, p in enumerate(st["points"]):
        if n <= 30 or i % max(1, n // 30) == 0:
            label = html.escape(str(p.get("sha", p["key"]))[:8])
            out.append(f'<text x="{x(i):.1f}" y="{H - 25}" font-size="9" '
                       f'transform="rotate(45 {x(i):.1f} {H - 25})">{label}</text>')  # fmt: skip
    return "\n".join([*out, "</svg>"])


def page(result: dict[str, Any]) -> str:
    """The whole page: the text report, then each stage's drawing."""
    from perflab.bisect.render import lines

    body = [f"<h1>bisect {html.escape(result['package'])}: {html.escape(result['good'])} → "
            f"{html.escape(result['bad'])}</h1>",
            f"<pre>{html.escape(chr(10).join(lines(result)))}</pre>"]  # fmt: skip
    for st in result["stages"]:
        body.append(f"<h2>{html.escape(st['axis'])}: ratio of each comparison (bar: the points "
                    "it spans; band: its interval)</h2>")  # fmt: skip
        if st.get("figure"):
            body.append(f"<p><img src='{html.escape(st['figure'])}' alt='{html.escape(st['axis'])}"
                        ": the metric of each point measured, with its interval'></p>")  # fmt: skip
        body.append(_svg(st))
    return (
        "<!doctype html><html><head><meta charset='utf-8'><title>perflab bisect</title>"
        "</head><body style='font-family:sans-serif'>" + "\n".join(body) + "</body></html>"
    )
