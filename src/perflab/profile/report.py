"""``profile.html``: one self-contained page (figures inlined, no network) for a profile."""

from __future__ import annotations

import base64
import time
from pathlib import Path
from typing import Any

import jinja2

from perflab.display import number
from perflab.files import atomic_write
from perflab.plots import save_plot
from perflab.profile import PROFILE_KINDS
from perflab.profile.base import FigureSpec
from perflab.profile.figures import BIN_LABELS

TEMPLATE = Path(__file__).with_name("template.html")


def _ms(phase: dict[str, Any] | None) -> str:
    return f"{phase['median_s'] * 1000:.2f}" if phase else "–"


def _pct(x: float | None) -> str:
    return f"{x:.0%}" if x is not None else "–"


def _num(x: float | None, fmt: str = ",.0f") -> str:
    return number(x, int(fmt.rsplit(".", 1)[1].rstrip("f")), missing="–")


def _run_row(r: dict[str, Any]) -> dict[str, Any]:
    rec = r["record"]
    return {
        "label": r["label"],
        "target": rec["target"],
        "workload": rec["workload"] or "",
        "treatments": ", ".join(rec["treatments"]) or "–",
        "status": rec["status"],
        "tasks": rec["tasks"] if rec["tasks"] is not None else "–",
        "wall": _num(rec["wall_s"], ".2f"),
        "processes": r.get("trace", {}).get("processes", "–"),
        "error": (rec["error"] or "")[:600],
    }


def _breakdown_row(r: dict[str, Any]) -> dict[str, Any] | None:
    tl = r.get("timeline")
    if not tl or not tl.get("tasks"):
        return None
    ph = tl["phases"]
    return {
        "label": r["label"],
        "tasks": tl["tasks"],
        "workers": tl["workers"],
        "submit": _ms(ph["submit"]),
        "queue": _ms(ph["queue"]),
        "execute": _ms(ph["execute"]),
        "return": _ms(ph["return"]),
        "busy": _pct(tl["worker_busy"]),
        "io": _pct(tl["io_share"]),
        "idle": _pct(tl["worker_idle"]),
        "stream": tl.get("engine_stream"),
    }


def _io_row(r: dict[str, Any]) -> dict[str, Any] | None:
    io = r.get("io")
    if not io or "write_calls" not in io:
        return None
    return {
        "label": f"{r['label']} ({io['scope']})",
        "calls": _num(io["write_calls"]),
        "bytes": _num(io["bytes"]),
        "time": _num(io["write_time_s"], ".3f"),
        "rate": _num(io["mib_per_s"], ",.1f"),
        "hist": [io["histogram"][b] for b in BIN_LABELS],
    }


def _sc_row(r: dict[str, Any]) -> dict[str, Any] | None:
    sc = r.get("syscalls")
    if not sc or "total" not in sc:
        return None
    ws = sc["worker_start"]
    task = sum(sc["per_task"]["mean"].values()) if sc["per_task"]["mean"] else None
    return {
        "label": r["label"],
        "total": _num(sum(sc["total"].values())),
        "start": _num(ws["all_calls"]) if ws["workers"] else "–",
        "lookups": _num(ws["metadata_ops"]) if ws["workers"] else "–",
        "node": _num(sc["node_overhead"]["metadata_ops"]),
        "task": _num(task, ",.1f"),
        "seconds": _num(ws["seconds"], ".2f"),
    }


def _figures(result: dict[str, Any], out: Path) -> list[dict[str, str]]:
    specs: list[FigureSpec] = []
    for k in result["kinds"]:
        per_run = {r["label"]: r[k] for r in result["runs"] if isinstance(r.get(k), dict)}
        specs += PROFILE_KINDS.get(k).figures(per_run)
    drawn = []
    for name, title, plot, caption in specs:
        png_path, _ = save_plot(plot, out / "figures" / name, width=6.4, height=4.8)
        png = base64.b64encode(png_path.read_bytes()).decode()
        drawn.append({"name": name, "title": title, "caption": caption, "png": png})
    return drawn


def write_html(result: dict[str, Any], out: Path) -> Path:
    """Render ``out/profile.html`` (and ``out/figures/``) from a profile result."""
    runs = result["runs"]
    env = jinja2.Environment(autoescape=True, undefined=jinja2.StrictUndefined)
    overhead = " ".join(dict.fromkeys(PROFILE_KINDS.get(k).overhead for k in result["kinds"]))
    first = runs[0]["record"]
    page = env.from_string(TEMPLATE.read_text()).render(
        title=f"Profile: {first['target']} {first['workload'] or ''}".strip(),
        overhead=overhead,
        runs=[_run_row(r) for r in runs],
        findings=result["findings"] + _comparison_text(result.get("comparison")),
        breakdowns=[b for b in map(_breakdown_row, runs) if b],
        io_rows=[b for b in map(_io_row, runs) if b],
        bins=BIN_LABELS,
        sc_rows=[b for b in map(_sc_row, runs) if b],
        projections=result["projection"],
        figures=_figures(result, out),
        generated=time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()),
    )
    return atomic_write(out / "profile.html", page)


def _comparison_text(c: dict[str, Any] | None) -> list[str]:
    if not c:
        return []
    out = []
    if c.get("write_calls_cut"):
        a, b = c["mib_per_s"]
        out.append(
            f"{c['to']} vs {c['from']}: write calls {c['write_calls'][0]:,} → "
            f"{c['write_calls'][1]:,} ({c['write_calls_cut']:,.1f}× fewer); MiB/s inside the "
            f"write calls {_num(a, ',.1f')} → {_num(b, ',.1f')}."
        )
    if c.get("worker_start_cut"):
        out.append(
            f"{c['to']} vs {c['from']}: file calls per worker start "
            f"{c['worker_start_calls'][0]:,.0f} → {c['worker_start_calls'][1]:,.0f} "
            f"({c['worker_start_cut']:.1f}× fewer; path lookups "
            f"{c['worker_start_lookups_cut'] or 0:.1f}× fewer)."
        )
    return out
