"""The zoo's scoreboard: figures (efficiency curves, METG, DAG overheads), one offline HTML
page, and the terminal table.  Input is ``analysis.zoo.zoo_table``'s dict."""

from __future__ import annotations

import base64
import json
import warnings
from pathlib import Path
from typing import Any

import jinja2
import pandas as pd
from plotnine import (
    aes,
    coord_flip,
    geom_col,
    geom_errorbar,
    geom_hline,
    geom_linerange,
    geom_path,
    geom_point,
    ggplot,
    labs,
    scale_x_log10,
    theme_bw,
)
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from perflab.analysis.zoo import absent_text, workflow_rows
from perflab.files import atomic_write
from perflab.report import zoo_workflows

TEMPLATE = Path(__file__).with_name("zoo.html")


def _filled(bound: pd.Series, value: pd.Series) -> pd.Series:
    """An interval end as floats; a missing end (too few runs) drawn at the estimate."""
    return pd.to_numeric(bound, errors="coerce").astype(float).fillna(value.astype(float))


def _curves(table: dict[str, Any]) -> tuple[Any, str] | None:
    rows = [{**p, "target": t} for t, m in table["metg"].items() for p in m["curve"]]
    if not rows:
        return None
    # joined in task-size order: on a loaded machine granularity need not fall with task size
    df = pd.DataFrame(rows).sort_values(["target", "task_us"], ascending=[True, False])
    df["lo"] = _filled(df["ci_low"], df["efficiency"])
    df["hi"] = _filled(df["ci_high"], df["efficiency"])
    plot = (
        ggplot(df, aes("granularity_us", "efficiency", colour="target"))
        + geom_path()
        + geom_point()
        + geom_linerange(aes(ymin="lo", ymax="hi"))
        + geom_hline(yintercept=table["threshold"], linetype="dashed")
        + scale_x_log10()
        + labs(x="task granularity (µs) = wall × cores ÷ tasks", y="efficiency", colour="")
        + theme_bw()
    )
    caption = (
        f"Efficiency ({table['basis']} basis) against task granularity, one line per engine; "
        "each point is one task size (joined from the largest down), bars are Student-t 95% "
        "intervals over replicates. "
        f"METG({table['threshold']:.0%}) is where a line crosses the dashed threshold: "
        "further left is better."
    )
    return plot, caption


def _bars(rows: list[dict[str, Any]], y: str, ylab: str) -> Any:
    df = pd.DataFrame(rows)
    df["lo"] = _filled(df["lo"], df[y])
    df["hi"] = _filled(df["hi"], df[y])
    return (
        ggplot(df, aes("target", y))
        + geom_col(fill="#4393c3")
        + geom_errorbar(aes(ymin="lo", ymax="hi"), width=0.3)
        + coord_flip()
        + labs(x="", y=ylab)
        + theme_bw()
    )


def _metg_bars(table: dict[str, Any]) -> tuple[Any, str] | None:
    rows = [
        {"target": t, "metg": m["metg_us"], "lo": m["ci_low"], "hi": m["ci_high"]}
        for t, m in table["metg"].items()
        if m["metg_us"] is not None
    ]
    if not rows:
        return None
    caption = (
        f"METG({table['threshold']:.0%}) per engine in µs (smaller is better); bars are the "
        "METGs of the efficiency curve's 95% bounds (a missing end: the bound never crossed "
        "the threshold)."
    )
    return _bars(rows, "metg", "METG (µs)"), caption


def _pattern_bars(table: dict[str, Any], kind: str, metric: str, scale: float) -> list[Any]:
    rows = []
    for t, cells in table["patterns"].items():
        s = (cells.get(kind) or {}).get(metric)
        if s:
            lo, hi = s["ci_low"], s["ci_high"]
            rows.append(
                {
                    "target": t,
                    "v": s["estimate"] * scale,
                    "lo": None if lo is None else lo * scale,
                    "hi": None if hi is None else hi * scale,
                }
            )
    return rows


def _chain(table: dict[str, Any]) -> tuple[Any, str] | None:
    rows = _pattern_bars(table, "chain", "latency_per_level_s", 1e6)
    if not rows:
        return None
    caption = (
        "Per-dependency latency of a chain (each task takes the previous one's result): "
        "(wall − critical-path work) ÷ tasks, in µs, mean over replicates with 95% intervals."
    )
    return _bars(rows, "v", "µs per dependency"), caption


def _fan(table: dict[str, Any]) -> tuple[Any, str] | None:
    rows = _pattern_bars(table, "fan", "efficiency", 1.0)
    if not rows:
        return None
    caption = (
        "Fan out/in (one source, n − 2 parallel tasks, one sink): efficiency = ideal "
        "makespan (max(critical path, work ÷ cores)) ÷ measured makespan, with 95% intervals; "
        "1 is perfect."
    )
    return _bars(rows, "v", "makespan efficiency (ideal ÷ measured)"), caption


def _workflows(table: dict[str, Any]) -> tuple[Any, str] | None:
    return zoo_workflows.figure(workflow_rows(table))


FIGURES = {
    "zoo_efficiency": ("Efficiency against task granularity", _curves),
    "zoo_metg": ("METG per engine", _metg_bars),
    "zoo_chain_latency": ("Chain: per-dependency latency", _chain),
    "zoo_fan_efficiency": ("Fan out/in: makespan vs ideal", _fan),
    "zoo_workflows": ("Workflows (WfCommons): makespan vs ideal", _workflows),
}


def render(table: dict[str, Any], out: Path) -> list[dict[str, str]]:
    """Every zoo figure as PNG and SVG in ``out``; returns the drawn ones (PNG inlined)."""
    out.mkdir(parents=True, exist_ok=True)
    drawn = []
    for name, (title, make) in FIGURES.items():
        made = make(table)
        if made is None:
            continue
        plot, caption = made
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for ext in ("png", "svg"):
                plot.save(out / f"{name}.{ext}", width=8, height=4.5, dpi=100, verbose=False)
        png = base64.b64encode((out / f"{name}.png").read_bytes()).decode()
        drawn.append({"name": name, "title": title, "caption": caption, "png": png})
    return drawn


def write_zoo_report(
    table: dict[str, Any], rows: list[dict[str, Any]], out_dir: str | Path, title: str
) -> Path:
    """``out_dir/zoo.html`` (self-contained), ``figures/`` and ``zoo.json``."""
    out = Path(out_dir)
    drawn = render(table, out / "figures")
    atomic_write(out / "zoo.json", json.dumps(table, default=float, indent=1))
    env = jinja2.Environment(autoescape=True, undefined=jinja2.StrictUndefined)
    html = env.from_string(TEMPLATE.read_text()).render(
        title=title,
        t=table,
        rows=[_cells(r) for r in rows],
        wf_columns=zoo_workflows.COLUMNS,
        wf_rows=[zoo_workflows.cells(r) for r in workflow_rows(table)],
        figures=drawn,
    )
    return atomic_write(out / "zoo.html", html)


def _ci(est: Any, ci: Any, scale: float = 1.0, digits: int = 1) -> str:
    if est is None:
        return "-"
    text = f"{est * scale:,.{digits}f}"
    if ci and (ci[0] is not None or ci[1] is not None):
        # an end the data cannot give (e.g. a bound that never crosses the threshold): ?
        lo, hi = (f"{v * scale:,.{digits}f}" if v is not None else "?" for v in ci)
        text += f" ({lo}–{hi})"
    return text


def _cells(r: dict[str, Any]) -> dict[str, str]:
    """One engine's headline figures as table cells (value and 95% CI)."""
    status = r.get("metg_status")
    if r.get("metg_us") is None:
        metg = "-"
    elif status in ("upper", "lower", "open"):  # a bound, and what stopped the search
        sign = "> " if status == "lower" else "≤ "
        why = r.get("metg_limit") or "not bracketed: measure more levels"
        metg = f"{sign}{r['metg_us']:,.0f} ({why})"
    else:
        metg = _ci(r["metg_us"], r["metg_ci"], digits=0)
    return {
        "target": r["target"],
        "metg": metg,
        "chain_latency": _ci(
            r.get("chain.latency_per_level_s"), r.get("chain.latency_per_level_s_ci"), 1e6
        ),
        "chain_rate": _ci(r.get("chain.tasks_per_s"), r.get("chain.tasks_per_s_ci"), digits=0),
        "fan_wall": _ci(r.get("fan.wall_s"), r.get("fan.wall_s_ci"), digits=3),
        "fan_ideal": _ci(r.get("fan.ideal_s"), None, digits=3),
        "fan_eff": _ci(r.get("fan.efficiency"), r.get("fan.efficiency_ci"), digits=2),
    }


COLUMNS = {
    "target": "engine",
    "metg": "METG µs (95% CI)",
    "chain_latency": "chain µs/dependency",
    "chain_rate": "chain tasks/s",
    "fan_wall": "fan makespan s",
    "fan_ideal": "fan ideal s",
    "fan_eff": "fan efficiency",
}


def print_zoo(table: dict[str, Any], rows: list[dict[str, Any]], name: str) -> None:
    """The scoreboard on the terminal (one row per engine)."""
    t = Table(
        title=f"zoo {name}: METG({table['threshold']:.0%}, {table['basis']} basis), chain, fan",
        title_justify="left",
    )
    for key, head in COLUMNS.items():
        t.add_column(head, justify="left" if key == "target" else "right")
    for r in rows:
        c = _cells(r)
        t.add_row(*(c[k] for k in COLUMNS))
    console = Console()
    if table["metg"] or any(table["patterns"].values()):  # a workflows-only zoo has none
        console.print(t)
    for target, m in table["metg"].items():
        console.print(f"{target}: efficiency by task size ({table['basis']} basis, 95% CI)")
        for p in m["curve"]:
            console.print(
                f"  {p['task_us']:>10,.1f} µs  granularity {p['granularity_us']:>12,.0f} µs  "
                f"efficiency {_ci(p['efficiency'], [p['ci_low'], p['ci_high']], digits=2)}"
            )
    wf = workflow_rows(table)
    if wf:
        w = Table(title="workflows (WfCommons): makespan vs list-scheduled ideal, 95% CI",
                  title_justify="left")  # fmt: skip
        for key, head in zoo_workflows.COLUMNS.items():
            w.add_column(head, justify="left" if key in ("target", "workflow") else "right")
        for r in wf:
            c = zoo_workflows.cells(r)
            w.add_row(*(c[k] for k in zoo_workflows.COLUMNS))
        console.print(w)
    for f in table["failed"]:
        console.print(f"[red]{f['status']}[/red] {f['target']} {f['kind']}: {f['error']}")
    for a in table.get("absent") or []:  # a zoo stored before issue 43 has none
        console.print(f"[red]no figure[/red] for {escape(absent_text(a))}")
