"""The path from slow to fast: waterfalls in the metric's unit (and tasks/s, from µs/task),
and treemaps."""

from __future__ import annotations

import numpy as np
import pandas as pd
from plotnine import (
    aes,
    element_text,
    geom_rect,
    geom_text,
    ggplot,
    labs,
    scale_x_continuous,
    theme,
    theme_bw,
)

from perflab.report.context import Context
from perflab.report.figures import NotDrawn, Result, figure


def _steps(ctx: Context, which: str) -> pd.DataFrame:
    steps = ctx.analysis["paths"][which]
    rows = []
    for i, s in enumerate(steps):
        rows.append(
            {
                "i": i,
                "label": s["factor"] or "untreated",
                "us": s["us_per_task"],
                "rate": s["tasks_per_s"],
                "prev_us": steps[i - 1]["us_per_task"] if i else 0.0,
                "prev_rate": steps[i - 1]["tasks_per_s"] if i else 0.0,
            }
        )
    df = pd.DataFrame(rows)
    df["label"] = pd.Categorical(df["label"], categories=list(df["label"]))
    return df


def _waterfall(ctx: Context, which: str, rate: bool) -> Result:
    if len(ctx.analysis["paths"][which]) < 2:
        raise NotDrawn("the path has no step (the best set is the untreated set)")
    if rate and ctx.ds.metric != "us_per_task":  # tasks/s is 1e6 / µs per task, nothing else
        raise NotDrawn(f"tasks/s comes from µs/task; the metric analysed is {ctx.ds.metric}")
    df = _steps(ctx, which)
    y, y0 = ("rate", "prev_rate") if rate else ("us", "prev_us")
    df["lo"] = np.minimum(df[y], df[y0])
    df["hi"] = np.maximum(df[y], df[y0])
    df["x0"] = df["i"] - 0.4
    df["x1"] = df["i"] + 0.4
    df["kind"] = np.where(df["i"] == 0, "start", np.where(df[y] < df[y0], "down", "up"))
    p = (
        ggplot(df)
        + geom_rect(aes(xmin="x0", xmax="x1", ymin="lo", ymax="hi", fill="kind"))
        + geom_text(aes(x="i", y="hi", label=df[y].map(lambda v: f"{v:,.0f}")), va="bottom", size=8)
        + scale_x_continuous(breaks=list(df["i"]), labels=list(df["label"].astype(str)))
        + theme_bw()
        + theme(axis_text_x=element_text(rotation=30, ha="right"), legend_position="none")
        + labs(x="", y="tasks/s" if rate else ctx.unit)
    )
    how = (
        "greedily, the best next factor first"
        if which == "greedy"
        else (
            "by the 'nice' order: environment, safe config, source changes that keep "
            "features, config that disables features, source changes that remove features"
        )
    )
    unit = (
        "tasks/s: the same path in throughput, where late small savings in µs/task become "
        "large gains"
        if rate
        else ctx.unit
    )
    return p, f"From the untreated set to the predicted best, adding factors {how}; in {unit}."


def _treemap(ctx: Context, which: str) -> Result:
    steps = ctx.analysis["paths"][which]
    if len(steps) < 2:
        raise NotDrawn("the path has no step (the best set is the untreated set)")
    parts = [
        {"label": f"remaining ({steps[-1]['us_per_task']:,.0f})", "v": steps[-1]["us_per_task"]}
    ]
    for s in steps[1:]:
        if s["delta_us"] < 0:
            parts.append({"label": f"{s['factor']} ({-s['delta_us']:,.0f})", "v": -s["delta_us"]})
    df = pd.DataFrame(parts).sort_values("v", ascending=False).reset_index(drop=True)
    rects = _squarify(list(df["v"]), 0, 0, 100, 100)
    df = pd.concat([df, pd.DataFrame(rects, columns=["x0", "y0", "x1", "y1"])], axis=1)
    df["cx"], df["cy"] = (df["x0"] + df["x1"]) / 2, (df["y0"] + df["y1"]) / 2
    p = (
        ggplot(df)
        + geom_rect(aes(xmin="x0", xmax="x1", ymin="y0", ymax="y1", fill="label"), colour="white")
        + geom_text(aes("cx", "cy", label="label"), size=7)
        + theme_bw()
        + theme(legend_position="none", axis_text=element_text(size=0))
        + labs(x="", y="")
    )
    return p, (
        f"The untreated run's {ctx.unit} as an area: what the path's factors saved, and what "
        "remains at the end."
    )


def _squarify(
    values: list[float], x: float, y: float, w: float, h: float
) -> list[tuple[float, ...]]:
    """Slice-and-dice treemap: alternate the split direction, largest first."""
    out: list[tuple[float, ...]] = []
    total = sum(values)
    horizontal = w >= h
    for v in values:
        frac = v / total if total else 0
        if horizontal:
            out.append((x, y, x + w * frac, y + h))
            x, w = x + w * frac, w * (1 - frac)
        else:
            out.append((x, y, x + w, y + h * frac))
            y, h = y + h * frac, h * (1 - frac)
        total -= v
        horizontal = not horizontal if w and h else horizontal
    return out


for _which, _suffix in (("greedy", ""), ("nice", "_nice")):
    figure(f"6_shap{_suffix}", f"{_which} path in the metric's unit")(
        lambda ctx, w=_which: _waterfall(ctx, w, rate=False)
    )
    figure(f"6_shap_by_rate{_suffix}", f"{_which} path in tasks/s")(
        lambda ctx, w=_which: _waterfall(ctx, w, rate=True)
    )
    figure(f"6_shap_treemap{_suffix}", f"{_which} path as areas")(
        lambda ctx, w=_which: _treemap(ctx, w)
    )
