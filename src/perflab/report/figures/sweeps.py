"""Sweeps: a metric over numeric levels, with 95% intervals (line charts)."""

from __future__ import annotations

from typing import Any

import pandas as pd
from plotnine import (
    aes,
    geom_line,
    geom_linerange,
    geom_point,
    ggplot,
    labs,
    scale_x_continuous,
    scale_x_log10,
    theme_bw,
)

from perflab.report.context import Context
from perflab.report.figures import NotDrawn, Result, figure


def sweep_frame(sweeps: dict[str, list[dict[str, Any]]]) -> pd.DataFrame:
    rows = [
        {**{k: v for k, v in p.items() if k != "given"}, "factor": f}
        for f, points in sweeps.items()
        for p in points
    ]
    df = pd.DataFrame(rows)
    if not df.empty:
        df["series"] = df["series"].replace("", "all runs")
        df["lo"] = df["ci_low"].fillna(df["estimate"])
        df["hi"] = df["ci_high"].fillna(df["estimate"])
    return df


def _x_axis(df: pd.DataFrame) -> tuple[pd.DataFrame, Any]:
    """The x position of each level and its scale: geometric sweeps (10 … 100000) on a log
    axis; geometric ones that include 0 (prefetch 0, 10, 100, 1000) evenly spaced and
    labelled with the levels; others linear."""
    levels = sorted(df["level"].unique())
    pos = [v for v in levels if v > 0]
    geometric = len(pos) >= 2 and pos[-1] / pos[0] >= 50
    df = df.copy()
    if geometric and len(pos) == len(levels):
        df["x"] = df["level"]
        return df, scale_x_log10()
    if geometric:
        rank = {v: i for i, v in enumerate(levels)}
        df["x"] = df["level"].map(rank)
        labels = [f"{v:g}" for v in levels]
        return df, scale_x_continuous(breaks=list(range(len(levels))), labels=labels)
    df["x"] = df["level"]
    return df, scale_x_continuous(breaks=levels, labels=[f"{v:g}" for v in levels])


def line_chart(df: pd.DataFrame, y: str, lo: str, hi: str, ylab: str, xlab: str) -> Any:
    df, scale = _x_axis(df)
    return (
        ggplot(df, aes("x", y, colour="series", group="series"))
        + geom_line()
        + geom_point()
        + geom_linerange(aes(ymin=lo, ymax=hi))
        + scale
        + labs(x=xlab, y=ylab, colour="")
        + theme_bw()
    )


def _factor_chart(ctx: Context, index: int) -> Result:
    sweeps = ctx.analysis.get("sweeps") or {}
    if len(sweeps) <= index:
        raise NotDrawn(f"the campaign sweeps {len(sweeps)} factor(s) over levels")
    name = list(sweeps)[index]
    df = sweep_frame({name: sweeps[name]})
    metric = ctx.ds.metric
    plot = line_chart(df, "estimate", "lo", "hi", metric, name)
    others = sorted({k for p in sweeps[name] for k in p["given"]})
    colour = f"colour: the level of {', '.join(others)}; " if others else ""
    caption = (
        f"Mean {metric} at each level of {name} ({colour}lines join the levels). Vertical "
        "bars are Student-t 95% intervals over the replicates; a point without a bar had one "
        "run."
    )
    return plot, caption


@figure("sweep", "Sweep: the metric at each level of the first swept factor", width=8, height=5)
def sweep(ctx: Context) -> Result:
    return _factor_chart(ctx, 0)


@figure("sweep_2", "Sweep: the metric at each level of the second swept factor", width=8, height=5)
def sweep_2(ctx: Context) -> Result:
    return _factor_chart(ctx, 1)


@figure("sweep_speedup", "Scaling: speed-up over the smallest level", width=8, height=5)
def sweep_speedup(ctx: Context) -> Result:
    sweeps = ctx.analysis.get("sweeps") or {}
    scaled = [f for f, pts in sweeps.items() if pts and "speedup" in pts[0]]
    if not scaled:
        raise NotDrawn("no swept factor is a scale (a speed-up needs numeric levels)")
    name = scaled[0]
    df = sweep_frame({name: sweeps[name]})
    ci = list(zip(df["speedup_ci"], df["speedup"], strict=True))
    df["slo"] = [c[0] if c[0] is not None else s for c, s in ci]
    df["shi"] = [c[1] if c[1] is not None else s for c, s in ci]
    df["ideal"] = df["level"] / df.groupby("series")["level"].transform("min")
    plot = line_chart(df, "speedup", "slo", "shi", "speed-up", name) + geom_line(
        aes(y="ideal"), linetype="dashed", colour="grey"
    )
    fits = ctx.analysis.get("scaling_fits", {}).get(name, [])
    law = ""
    if fits:
        f = fits[0]
        law = (
            f" USL fit ({f['series'] or 'all runs'}): σ = {f['sigma']:.3g}, "
            f"κ = {f['kappa']:.3g}; every series' fit is in analysis.json (scaling_fits)."
        )
    caption = (
        f"Speed-up over the smallest {name} level (time metrics: its time ÷ this level's); "
        "the dashed line is perfect scaling. Bars: percentile-bootstrap 95% intervals. "
        "Parallel efficiency = speed-up ÷ (level ÷ smallest level) is in analysis.json." + law
    )
    return plot, caption


__all__ = ["sweep", "sweep_2", "sweep_speedup"]
