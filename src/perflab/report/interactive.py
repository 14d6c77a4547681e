"""The report's interactive page: pick a factor for a before/after scatter and a factor to
colour by, hover a point to see its sets and runs.

Vega-Lite, Vega and vega-embed come from the ``vl-convert-python`` package's own bundle and
are written into the page: no network request of any kind. The page keeps a Content Security
Policy without 'unsafe-inline' or 'unsafe-eval' for scripts: its two scripts are allowed by
their SHA-256 and Vega evaluates expressions with its interpreter (``ast: true``), never
``new Function``.
"""

from __future__ import annotations

import base64
import hashlib
import html
import json
from pathlib import Path
from typing import Any

import pandas as pd

from perflab.files import atomic_write
from perflab.report.context import Context

#: Pairs of sets shown at most (a random sample beyond; the page says so).
MAX_PAIRS = 20_000
#: Run ids listed per set in a point's tooltip.
RUN_IDS = 5
PAGE = "interactive.html"
NONE = "(none)"


def _run_ids(ctx: Context) -> dict[int, list[str]]:
    """Each measured set's run ids (the ok runs the analysis read, in the same order)."""
    runs = ctx.runs
    if "run_id" not in runs.columns or len(runs) == 0:
        return {}
    ok = runs["status"] == "ok" if "status" in runs.columns else pd.Series(True, runs.index)
    ok &= runs[ctx.ds.metric].notna() if ctx.ds.metric in runs.columns else ok
    ids = runs.loc[ok, "run_id"].astype(str).tolist()
    if len(ids) != len(ctx.ds.y):
        return {}
    out: dict[int, list[str]] = {}
    for key, rid in zip(ctx.ds.keys.tolist(), ids, strict=True):
        out.setdefault(int(key), []).append(rid)
    return out


def _names(ctx: Context, key: int) -> str:
    return ", ".join(ctx.ds.names_of(key)) or "untreated"


def _rows(ctx: Context) -> tuple[list[dict[str, Any]], str]:
    d = ctx.deltas
    note = ""
    if len(d) > MAX_PAIRS:
        d = d.sample(MAX_PAIRS, random_state=0)
        note = f"a random {MAX_PAIRS:,} of {len(ctx.deltas):,} pairs of sets shown"
    ids = _run_ids(ctx)
    bits = {f: 1 << j for j, f in enumerate(ctx.ds.factors)}

    def listed(key: int) -> str:
        got = ids.get(key, [])
        more = f" (+{len(got) - RUN_IDS} more)" if len(got) > RUN_IDS else ""
        return ", ".join(got[:RUN_IDS]) + more

    rows = []
    for r in d.to_dict("records"):
        base = int(r["base_key"])
        after = base | bits[str(r["factor"])]
        row: dict[str, Any] = {
            "factor": str(r["factor"]),
            "before": round(float(r["before"]), 3),
            "after": round(float(r["after"]), 3),
            "before_set": _names(ctx, base),
            "after_set": _names(ctx, after),
            "run_pairs": int(r["weight"]),
            "runs_before": listed(base),
            "runs_after": listed(after),
        }
        for f, b in bits.items():
            row[f"had_{f}"] = "yes" if base & b else "no"
        rows.append(row)
    return rows, note


def spec(ctx: Context, factor: str, colour_by: str | None) -> dict[str, Any]:
    """The Vega-Lite spec: data inline, two bound selects, a diagonal, a tooltip."""
    rows, _ = _rows(ctx)
    factors = list(ctx.ds.factors)
    tooltip = [
        {"field": "before_set", "title": "X"},
        {"field": "after_set", "title": "X + factor"},
        {"field": "before", "title": f"{ctx.unit} before", "format": ",.1f"},
        {"field": "after", "title": f"{ctx.unit} after", "format": ",.1f"},
        {"field": "run_pairs", "title": "run pairs"},
        {"field": "runs_before", "title": "runs of X"},
        {"field": "runs_after", "title": "runs of X + factor"},
    ]
    return {
        "$schema": "https://vega.github.io/schema/vega-lite/v5.json",
        "width": 640,
        "height": 480,
        "data": {"name": "pairs", "values": rows},
        "params": [
            {
                "name": "factor",
                "value": factor,
                "bind": {"input": "select", "options": factors, "name": "factor added "},
            },
            {
                "name": "colour_by",
                "value": colour_by or NONE,
                "bind": {
                    "input": "select",
                    "options": [NONE, *factors],
                    "name": "colour: already applied ",
                },
            },
        ],
        "transform": [
            {"filter": "datum.factor == factor"},
            {
                "calculate": f"colour_by == '{NONE}' ? 'all pairs' : "
                "(colour_by == factor ? 'n/a' : datum['had_' + colour_by])",
                "as": "already",
            },
        ],
        "layer": [
            {
                "mark": {"type": "point", "filled": True, "opacity": 0.7, "size": 60},
                "encoding": {
                    "x": {
                        "field": "before",
                        "type": "quantitative",
                        "title": f"{ctx.unit} before",
                        "scale": {"zero": False},
                    },
                    "y": {
                        "field": "after",
                        "type": "quantitative",
                        "title": f"{ctx.unit} after adding the factor",
                        "scale": {"zero": False},
                    },
                    "color": {
                        "field": "already",
                        "type": "nominal",
                        "title": "already applied",
                    },
                    "tooltip": tooltip,
                },
            },
            {
                # the diagonal across the shown range: on it the factor changed nothing
                "mark": {"type": "rule", "strokeDash": [4, 4], "color": "#555"},
                "encoding": {
                    "x": {"aggregate": "min", "field": "before", "type": "quantitative"},
                    "y": {"aggregate": "min", "field": "before", "type": "quantitative"},
                    "x2": {"aggregate": "max", "field": "before"},
                    "y2": {"aggregate": "max", "field": "before"},
                },
            },
        ],
    }


def _sha(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode() + "'"


def available() -> bool:
    """Whether the bundled Vega-Lite is installed (``vl-convert-python``)."""
    try:
        import vl_convert  # noqa: F401
    except ImportError:
        return False
    return True


#: What the bundle exposes to the page's own script.
SNIPPET = "window.vegaEmbed = vegaEmbed; window.vega = vega;"


def bundle() -> str:
    """vega-embed, Vega-Lite and Vega as one script: made by vl-convert (seconds: it bundles
    them with their dependencies) once per version, then read from perflab's private home."""
    from importlib.metadata import version

    import vl_convert

    from perflab.files import home_dir

    key = hashlib.sha256(f"{version('vl-convert-python')}\n{SNIPPET}".encode()).hexdigest()
    cached = home_dir("cache") / f"vega-bundle-{key[:16]}.js"
    if cached.is_file():
        return cached.read_text()
    js: str = vl_convert.javascript_bundle(SNIPPET)
    atomic_write(cached, js)
    return js


def write_interactive(
    ctx: Context, out: Path, factor: str | None = None, colour_by: str | None = None
) -> Path | None:
    """``out/interactive.html``, starting at ``factor`` coloured by ``colour_by`` (default:
    the factor with most pairs, no colour); None when no factor has a measured pair or the
    bundle is not installed."""
    if ctx.deltas.empty or not available():
        return None

    if factor is None:
        factor = str(ctx.deltas["factor"].value_counts().idxmax())
    _, note = _rows(ctx)
    js = bundle()
    # "</" never closes the script early: the data are user strings (factor names)
    data = json.dumps(spec(ctx, factor, colour_by)).replace("</", "<\\/")
    app = (
        f"const spec = {data};\n"
        "vegaEmbed('#vis', spec, {actions: false, ast: true, renderer: 'svg'})"
        ".then(r => { window.view = r.view; document.body.dataset.ready = 'yes'; })"
        ".catch(e => { document.body.dataset.ready = 'failed'; console.error(String(e)); });"
    )
    csp = (
        "default-src 'none'; img-src data:; style-src 'unsafe-inline'; "
        f"script-src {_sha(js)} {_sha(app)}"
    )
    title = html.escape(f"perflab: before/after pairs ({ctx.ds.metric})")
    page = (
        '<!doctype html><html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{csp}">'
        f"<title>{title}</title><style>body{{font-family:system-ui,sans-serif;"
        "margin:2em auto;max-width:1100px;color:#222}</style></head><body>"
        f"<h1>{title}</h1><p>Each point is a measured pair of treatment sets X and "
        "X+{factor}: below the dashed diagonal the factor made runs faster. Pick the factor "
        "and the factor to colour by (whether it was already in X); hover a point for its "
        f"sets and runs. {html.escape(note)}</p>"
        f'<div id="vis"></div><script>{js}</script><script>{app}</script></body></html>'
    )
    return atomic_write(out / PAGE, page)
