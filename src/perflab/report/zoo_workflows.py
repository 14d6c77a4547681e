"""The zoo's workflow rows (WfCommons recipes): figure and table cells beside METG.

Input is ``analysis.zoo.workflow_rows`` (one row per engine, recipe and size).
"""

from __future__ import annotations

from typing import Any

import pandas as pd
from plotnine import (
    aes,
    coord_flip,
    facet_wrap,
    geom_col,
    geom_errorbar,
    ggplot,
    labs,
    theme_bw,
)

#: Columns of the workflow table: key -> heading.
COLUMNS = {
    "target": "engine",
    "workflow": "workflow",
    "tasks": "tasks",
    "wall_s": "makespan s",
    "ideal_s": "ideal s",
    "overhead_s": "overhead s",
    "efficiency": "efficiency",
    "queue_delay_p50_s": "queue delay p50 ms",
}


def _ci(est: Any, ci: Any, scale: float = 1.0, digits: int = 2) -> str:
    if est is None:
        return "-"
    text = f"{est * scale:,.{digits}f}"
    if ci and ci[0] is not None and ci[1] is not None:
        text += f" ({ci[0] * scale:,.{digits}f}–{ci[1] * scale:,.{digits}f})"
    return text


def cells(r: dict[str, Any]) -> dict[str, str]:
    """One workflow row as table cells (mean and Student-t 95% interval)."""
    return {
        "target": r["target"],
        "workflow": r["workflow"],
        "tasks": f"{r['tasks']:.0f}" if r.get("tasks") is not None else "-",
        "wall_s": _ci(r["wall_s"], r["wall_s_ci"]),
        "ideal_s": _ci(r["ideal_s"], None),
        "overhead_s": _ci(r["overhead_s"], r["overhead_s_ci"]),
        "efficiency": _ci(r["efficiency"], r["efficiency_ci"]),
        "queue_delay_p50_s": _ci(r["queue_delay_p50_s"], r["queue_delay_p50_s_ci"], 1e3, 1),
    }


def figure(rows: list[dict[str, Any]]) -> tuple[Any, str] | None:
    """Efficiency (ideal ÷ makespan) per engine, one panel per workflow."""
    if not rows:
        return None
    df = pd.DataFrame(rows)
    df["lo"] = [c[0] if c and c[0] is not None else e for c, e in zip(
        df["efficiency_ci"], df["efficiency"], strict=True)]  # fmt: skip
    df["hi"] = [c[1] if c and c[1] is not None else e for c, e in zip(
        df["efficiency_ci"], df["efficiency"], strict=True)]  # fmt: skip
    plot = (
        ggplot(df, aes("target", "efficiency"))
        + geom_col(fill="#4393c3")
        + geom_errorbar(aes(ymin="lo", ymax="hi"), width=0.3)
        + coord_flip()
        + facet_wrap("workflow", ncol=2)
        + labs(x="", y="efficiency = ideal ÷ makespan")
        + theme_bw()
    )
    caption = (
        "WfCommons workflows (recipe-tasks) on each engine: the ideal is the zero-overhead "
        "list schedule of the workflow's scaled task runtimes on the run's workers; "
        "efficiency = ideal ÷ measured makespan (1 is perfect), mean over replicates with "
        "Student-t 95% intervals. File reads and writes are part of the makespan, not of "
        "the ideal."
    )
    return plot, caption
