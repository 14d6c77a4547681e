"""``atlas publish``: the atlas as a static, offline, multi-page site — an index with
sparklines and the open steps, a page per benchmark (its series and steps in Vega-Lite, with
the report's bundled Vega), a page per step (its detection, confirmation, the bisection's
probes, culprits, hunks and the commands to reproduce), a regressions page,
``regressions.json`` and an Atom feed. Every page works from ``file://``."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any
from xml.sax.saxutils import escape as xesc

import numpy as np

from perflab.atlas.pages import esc, page, ratio_text, series_spec, sparkline, table, vega_app
from perflab.atlas.project import Atlas
from perflab.atlas.store import OPEN, Store
from perflab.atlas.triage import status
from perflab.files import atomic_write, output_dir


def _rows(store: Store, bench: str) -> list[dict[str, Any]]:
    runs = store.runs(bench)
    out = []
    for p in store.points(axis_only=True):
        v = runs.get(p["key"])
        if v:
            out.append(
                {
                    "ord": p["ord"],
                    "label": p["label"],
                    "subject": p["subject"] or "",
                    "mean": float(np.exp(np.mean(np.log(v)))),
                    "low": min(v),
                    "high": max(v),
                    "runs": len(v),
                }
            )
    return out


def _link(s: dict[str, Any]) -> str:
    return f'<a href="step-{s["id"]}.html">step {s["id"]}</a>'


def _step_row(s: dict[str, Any]) -> list[str]:
    culprits = ", ".join(
        f"<code>{esc(c['sha'][:10])}</code>" + (f" #{c['pr']}" if c["pr"] else "")
        for c in s["culprits"]
    )
    link = f"linked to step {s['link']}" if s["link"] else ""
    return [
        _link(s),
        esc(s["benchmark"]),
        esc(s["state"]),
        ratio_text(s),
        culprits,
        esc(link),
        esc(s["note"] or ""),
    ]


HEAD = ["step", "benchmark", "state", "ratio (interval)", "culprits", "link", "note"]


def publish(atlas: Atlas, store: Store, out: Path) -> list[Path]:
    """Write the site into ``out``; the files written."""
    from perflab.report import interactive

    out = output_dir(out, "-o")
    st = status(Path("."), store, list(atlas.benchmarks))
    steps = [s for b in st["benchmarks"].values() for s in b["steps"]]
    js = interactive.bundle() if interactive.available() else None
    written = [_index(atlas, store, st, steps, out)]
    for name, b in st["benchmarks"].items():
        written.append(_bench_page(atlas, store, name, b, js, out))
    points = {p["key"]: p for p in store.points()}
    for s in steps:
        written.append(_step_page(atlas, s, points, out))
    regs = [s for s in steps if s["direction"] == "slower"]
    body = table(HEAD, [_step_row(s) for s in regs]) if regs else "<p>No regression found.</p>"
    written.append(atomic_write(out / "regressions.html", page("Regressions", body)))
    written.append(
        atomic_write(
            out / "regressions.json",
            json.dumps({"package": atlas.package, "regressions": regs}, indent=1, default=str),
        )
    )
    written.append(atomic_write(out / "feed.xml", feed(atlas, steps)))
    return written


def _index(
    atlas: Atlas, store: Store, st: dict[str, Any], steps: list[dict[str, Any]], out: Path
) -> Path:
    rows = []
    for name, b in st["benchmarks"].items():
        open_ = [s for s in b["steps"] if s["state"] in OPEN]
        rows.append(
            [
                f'<a href="bench-{esc(name)}.html">{esc(name)}</a>',
                sparkline([r["mean"] for r in _rows(store, name)]),
                str(b["points_measured"]),
                str(b["runs"]),
                str(len(open_)),
            ]
        )
    last = st["updates"][-1] if st["updates"] else {}
    body = (
        f"<p>{esc(atlas.package)} from <code>{esc(atlas.repo)}</code>, axis {esc(atlas.axis)}; "
        f"{st['points']} commits known; last update {esc(last.get('ended') or 'never')}.</p>"
        + table(["benchmark", "series", "points", "runs", "open steps"], rows)
        + "<h2>Open steps</h2>"
        + (table(HEAD, [_step_row(s) for s in steps if s["state"] in OPEN]) or "")
    )
    return atomic_write(out / "index.html", page(f"perflab atlas: {atlas.package}", body))


def _bench_page(
    atlas: Atlas, store: Store, name: str, b: dict[str, Any], js: str | None, out: Path
) -> Path:
    bench = atlas.benchmarks[name]
    rows = _rows(store, name)
    ords = {p["key"]: p["ord"] for p in store.points()}
    marks = [
        {
            "id": s["id"],
            "state": s["state"],
            "direction": s["direction"],
            "ratio": s["ratio"],
            "ord": ords.get(s["detection"].get("after"), 0) - 0.5,
        }
        for s in b["steps"]
        if s["detection"]
    ]
    skipped = [f"<code>{esc(k[:10])}</code>: {esc(f['reason'])}" for k, f in b["failed"].items()]
    body = (
        f"<p>{esc(bench.command or bench.target)} — metric {esc(bench.metric)}, "
        f"{bench.runs} runs per point.</p>"
        + ('<div id="vis"></div>' if js else "<p>(Vega-Lite is not installed: no chart.)</p>")
        + "<h2>Steps</h2>"
        + table(HEAD, [_step_row(s) for s in b["steps"]])
        + (
            "<h2>Skipped</h2><ul>" + "".join(f"<li>{x}</li>" for x in skipped) + "</ul>"
            if skipped
            else ""
        )
    )
    scripts = [js, vega_app(series_spec(name, bench.metric, rows, marks))] if js else []
    return atomic_write(out / f"bench-{name}.html", page(f"{name}", body, scripts))


def _fmt(v: Any) -> str:
    return f"{v:.3f}" if isinstance(v, float) and math.isfinite(v) else esc(v)


def _step_page(atlas: Atlas, s: dict[str, Any], points: dict[str, Any], out: Path) -> Path:
    det, conf, search = s["detection"], s["confirmation"], s["search"] or {}
    keys = [k for k in (s.get("keys") or [])]
    probes = [
        [
            _fmt(p.get("a")),
            _fmt(p.get("b")),
            _fmt(p["ratio"]),
            f"{_fmt(p['low'])}–{_fmt(p['high'])}",
            esc(p["verdict"]),
            str(p["runs"]),
        ]
        for p in search.get("steps", [])
    ]
    culprits = []
    for c in s["culprits"]:
        hunks = table(
            ["hunk group", "units", "lines", "share (interval)", "reverted ÷ culprit", "why"],
            [
                [
                    esc(h["factor"]),
                    esc(", ".join(h["units"])),
                    str(h["lines"]),
                    _share(h),
                    f"{_fmt(h['ratio'])}× ({esc(h['verdict'])})" if "ratio" in h else "",
                    esc(h.get("why") or ""),
                ]
                for h in c["hunks"]
            ],
        )
        culprits.append(
            f"<h3><code>{esc(c['sha'][:10])}</code> {esc(c['subject'])}</h3>"
            f"<p>share {c['share']:.0%} ({c['share_low']:.0%}–{c['share_high']:.0%}); its "
            f"comparison {c['ratio']:.3f}× ({c['low']:.3f}–{c['high']:.3f})</p>{hunks}"
            f"<pre>perflab bisect --repo {esc(atlas.repo)} --package {esc(atlas.package)} "
            f"--good {esc(c['before'][:12])} --bad {esc(c['sha'][:12])} --build tree "
            f"--command '…' --explain</pre>"
        )
    body = (
        f"<p>{esc(s['benchmark'])}: <b>{esc(s['state'])}</b>, {esc(s['direction'])}, "
        f"{ratio_text(s)} from {esc(s['ratio_from'])}; between <code>{esc(s['a'][:10])}</code> "
        f"({esc(s['a_subject'])}) and <code>{esc(s['b'][:10])}</code> ({esc(s['b_subject'])})."
        f"{' Linked to ' + _link({'id': s['link']}) + '.' if s['link'] else ''}</p>"
        f"<h2>Detection</h2><p>{_fmt(det.get('ratio'))}× ({_fmt(det.get('low'))}–"
        f"{_fmt(det.get('high'))}), p {_fmt(det.get('p'))}; {esc(det.get('statement', ''))}</p>"
        "<h2>Confirmation</h2>"
        + (
            f"<p>paired gate on fresh runs: {_fmt(conf['ratio'])}× ({_fmt(conf['low'])}–"
            f"{_fmt(conf['high'])}), {esc(conf['verdict'])}, {conf['runs']} runs at level "
            f"{conf['level']:.3g}</p>"
            if conf
            else "<p>not yet</p>"
        )
        + _rounds(s)
        + "<h2>Bisection</h2>"
        + (
            f"<p>{esc(search.get('error', ''))}; outcome {esc(search.get('outcome'))}, "
            f"{search.get('runs', 0)} runs over {len(keys)} commits.</p>"
            + table(["a", "b", "ratio", "interval", "verdict", "runs"], probes)
            if search
            else "<p>not yet</p>"
        )
        + "<h2>Culprits</h2>"
        + ("".join(culprits) or "<p>none named</p>")
        + (f"<h2>Note</h2><p>{esc(s['note'])}</p>" if s["note"] else "")
    )
    return atomic_write(out / f"step-{s['id']}.html", page(f"Step {s['id']}", body))


def _share(h: dict[str, Any]) -> str:
    """A hunk group's measured share of its culprit's step, or why it has none."""
    if "share" in h:
        return f"{h['share']:.0%} ({h['share_low']:.0%}–{h['share_high']:.0%})"
    return "queued" if h.get("to_measure") else esc(h.get("not_measured") or "listed")


def _rounds(s: dict[str, Any]) -> str:
    """The gate's rounds, when the first left the step undecided."""
    if len(s["rounds"]) < 2 and not s["retry"]:
        return ""
    rows = [
        [str(r["round"]), _fmt(r["ratio"]), f"{_fmt(r['low'])}–{_fmt(r['high'])}",
         esc(r["verdict"]), str(r["runs"]), f"{r['level']:.3g}"]
        for r in s["rounds"]
    ]  # fmt: skip
    more = "<p>queued: another round, with twice the runs, at the next update</p>"
    return table(["round", "ratio", "interval", "verdict", "runs", "level"], rows) + (
        more if s["retry"] else ""
    )


def feed(atlas: Atlas, steps: list[dict[str, Any]]) -> str:
    """An Atom feed of the steps, newest change first."""
    entries = []
    for s in sorted(steps, key=lambda s: s["updated"], reverse=True):
        title = f"{s['benchmark']}: step {s['id']} {s['direction']} ({s['state']})"
        entries.append(
            f"<entry><title>{xesc(title)}</title><id>urn:perflab-atlas:{xesc(atlas.package)}:"
            f"step:{s['id']}</id><updated>{xesc(s['updated'])}</updated>"
            f'<link href="step-{s["id"]}.html"/><summary>{xesc(str(s["ratio"]))}× between '
            f"{xesc(s['a'][:10])} and {xesc(s['b'][:10])}</summary></entry>"
        )
    updated = max((s["updated"] for s in steps), default="1970-01-01T00:00:00+00:00")
    return (
        '<?xml version="1.0" encoding="utf-8"?>\n<feed xmlns="http://www.w3.org/2005/Atom">'
        f"<title>perflab atlas: {xesc(atlas.package)}</title>"
        f"<id>urn:perflab-atlas:{xesc(atlas.package)}</id><updated>{updated}</updated>"
        + "".join(entries)
        + "</feed>\n"
    )
