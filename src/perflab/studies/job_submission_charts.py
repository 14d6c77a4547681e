"""The job-submission table and curves, rendered: a terminal table beside the original
study's figures, and the scaling curves as plotnine figures (PNG and SVG)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from perflab.display import number
from perflab.plots import save_plot


def print_table(rows: Sequence[dict[str, Any]], console: Console | None = None) -> None:
    """The table; under each row of ours, the original study's figures (1,000 jobs, 2013
    hardware). ``util %`` is tree CPU over real time, in % of one core."""
    console = console or Console(width=max(Console().width, 110))
    t = Table(title="Job submission — here, and the original study's figures beneath")
    for col in ("id", "type", "", "jobs", "jobs/s", "real (s)", "sys (s)", "user (s)", "util %"):
        t.add_column(col, justify="left" if col in ("type", "") else "right")
    for r in rows:
        rate = number(r["jobs_per_s"]) if r["jobs_per_s"] is not None else "failed"
        was = r["seed"]  # the original study's figures (JSON key kept)
        t.add_row(
            r["id"], r["type"], "here", str(r["jobs"]), rate, number(r["real_s"], 2),
            number(r["sys_s"], 2), number(r["user_s"], 2), number(r["util_pct"]),
            end_section=not was,
        )  # fmt: skip
        if was:
            t.add_row(
                "", "", "original", "1,000", number(was["jobs_per_s"]), number(was["real_s"]),
                number(was["sys_s"]), number(was["user_s"]), number(was["util_pct"]),
                style="dim", end_section=True,
            )  # fmt: skip
    console.print(t)
    for r in rows:
        if r["failed"]:
            console.print(f"row {r['id']}: {r['failed']} failed run(s): {r['error']}")


def print_curve(name: str, rows: Sequence[dict[str, Any]], console: Console | None = None) -> None:
    keys = [
        k for k in rows[0] if k not in ("target", "rate", "rates", "real_s", "failed", "run_ids")
    ]
    unit = "events/s" if rows[0]["target"] == "redis-pubsub" else "jobs/s"
    t = Table(title=f"Job-submission curve: {name}")
    for k in (*keys, unit, "runs", "failed"):
        t.add_column(k, justify="right")
    for r in rows:
        t.add_row(
            *(str(r[k]) for k in keys),
            number(r["rate"]),
            str(len(r["rates"])),
            str(len(r["failed"])),
        )
    (console or Console()).print(t)


def curve_figure(name: str, rows: Sequence[dict[str, Any]], x: str, out_dir: Path) -> list[Path]:
    """Rate against ``x`` (each run a point, medians joined), one line per shard count for
    the pub/sub curve; written as ``job_submission_<name>.png`` and ``.svg``."""
    import pandas as pd
    from plotnine import aes, geom_line, geom_point, ggplot, labs, theme_bw

    unit = "events/s" if rows[0]["target"] == "redis-pubsub" else "jobs/s"
    colour = "shards" if "shards" in rows[0] else None
    runs = pd.DataFrame(
        [{**{k: r[k] for k in (x, colour) if k}, "rate": v} for r in rows for v in r["rates"]]
    )
    med = pd.DataFrame(
        [{**{k: r[k] for k in (x, colour) if k}, "rate": r["rate"]} for r in rows if r["rate"]]
    )
    if colour:
        runs[colour] = runs[colour].astype(str)
        med[colour] = med[colour].astype(str)
    mapping = aes(x=x, y="rate", colour=colour) if colour else aes(x=x, y="rate")
    plot = (
        ggplot(runs, mapping)
        + geom_point(alpha=0.5)
        + geom_line(data=med)
        + labs(x=x, y=f"{unit} (median line; points are runs)", title=f"Job submission: {name}")
        + theme_bw()
    )
    return save_plot(plot, out_dir / f"job_submission_{name}", width=6, height=4, dpi=120)
