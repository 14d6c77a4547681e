"""The post-processing study's four charts per engine: measured points with intervals,
the model as lines."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from perflab.plots import save_plot

XLABEL = {
    "tasks": "max tasks",
    "concurrency": "concurrent tasks",
    "task_s": "task time (s)",
    "pp_s": "post-process time (s)",
}


def charts(summary: list[dict[str, Any]], out: Path) -> list[Path]:
    """The study's four charts per engine (PNG and SVG): measured mean ± 95% CI, model lines."""
    import pandas as pd
    from plotnine import (
        aes,
        facet_wrap,
        geom_line,
        geom_linerange,
        geom_point,
        ggplot,
        labs,
        theme_bw,
    )

    written = []
    for engine in sorted({s["engine"] for s in summary}):
        meas = pd.DataFrame(
            [
                {
                    **{
                        k: s[k] for k in ("chart", "level", "policy", "mean_s", "ci_low", "ci_high")
                    },
                    "panel": XLABEL[s["chart"]],
                }
                for s in summary
                if s["engine"] == engine
            ]
        )
        model = (
            pd.DataFrame(
                [
                    {"panel": XLABEL[s["chart"]], "level": s["level"], "policy": pol, "v": v}
                    for s in summary
                    if s["engine"] == engine
                    for pol, v in s["models"].items()
                    if pol == s["policy"] or pol == "wq-retrieve-many"
                ]
            )
            # wq-retrieve-many is predicted from the runs of both policies: one line.
            .groupby(["panel", "level", "policy"], as_index=False)
            .agg(model_s=("v", "mean"))
        )
        p = (
            ggplot()
            + geom_line(
                data=model, mapping=aes("level", "model_s", color="policy"), linetype="dashed"
            )
            + geom_linerange(
                data=meas.dropna(subset=["ci_low"]),
                mapping=aes("level", ymin="ci_low", ymax="ci_high", color="policy"),
            )
            + geom_point(data=meas, mapping=aes("level", "mean_s", color="policy"))
            + facet_wrap("~panel", scales="free")
            + labs(
                x="",
                y="makespan (s)",
                title=f"{engine}: points measured (mean, 95% CI), dashed lines the model",
            )
            + theme_bw()
        )
        written += save_plot(p, out / f"postprocess_{engine}", width=9, height=6.5, dpi=110)
    return written
