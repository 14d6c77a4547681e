"""The models: predicted vs measured, coefficients beside mean deltas, interaction tiles."""

from __future__ import annotations

import pandas as pd
from plotnine import (
    aes,
    coord_flip,
    element_text,
    geom_abline,
    geom_col,
    geom_hline,
    geom_point,
    geom_tile,
    ggplot,
    labs,
    scale_fill_gradient2,
    theme,
    theme_bw,
)

from perflab.report.context import Context
from perflab.report.figures import NotDrawn, Result, figure


def _fit_plot(ctx: Context, name: str) -> Result:
    df = pd.DataFrame({"measured": ctx.ds.y, "predicted": ctx.predictions[name]})
    df, note = ctx.sample(df)
    r2 = ctx.analysis["models"][name]["r2"]
    p = (
        ggplot(df, aes("measured", "predicted"))
        + geom_point(alpha=0.3)
        + geom_abline(slope=1, intercept=0, linetype="dashed")
        + theme_bw()
        + labs(x=f"measured {ctx.unit}", y=f"predicted {ctx.unit}")
    )
    what = (
        "factors plus drift terms (hours, time of day)"
        if name == "linear"
        else "factors and every pairwise interaction"
    )
    return (
        p,
        f"Linear model of {ctx.ds.metric} on {what}: R² = {r2:.3f}{note}. "
        "Points on the diagonal are fitted well.",
    )


@figure("4_lm3", "Linear model: predicted vs measured")
def lm3(ctx: Context) -> Result:
    return _fit_plot(ctx, "linear")


@figure("4_lm3_cols", "Linear model coefficients beside mean deltas")
def lm3_cols(ctx: Context) -> Result:
    coef = ctx.analysis["models"]["linear"]["coef"]
    rows = []
    for f, v in ctx.analysis["factors"].items():
        if f in coef:
            rows.append({"factor": f, "value": coef[f], "source": "lm coefficient"})
        if v["mean_delta_us"] is not None:
            rows.append({"factor": f, "value": v["mean_delta_us"], "source": "mean delta"})
    df = pd.DataFrame(rows)
    order = list(df.groupby("factor")["value"].mean().sort_values().index)[::-1]
    df["factor"] = pd.Categorical(df["factor"], categories=order)
    p = (
        ggplot(df, aes("factor", "value", fill="source"))
        + geom_col(position="dodge")
        + coord_flip()
        + geom_hline(yintercept=0)
        + theme_bw()
        + labs(x="", y=ctx.unit, fill="")
    )
    return p, (
        "Two estimates of each factor's cost: the linear model's coefficient (fitted over "
        "all runs) and the mean over exact X, X+{t} pairs. They differ where factors interact."
    )


@figure("4_lm6", "Pairwise model: predicted vs measured")
def lm6(ctx: Context) -> Result:
    return _fit_plot(ctx, "pairwise")


@figure("4_lm6_tiles", "Interaction tile map", width=8, height=7)
def lm6_tiles(ctx: Context) -> Result:
    rows = []
    for r in ctx.analysis["interactions"]:
        if r["effect_us"] is None:  # aliased or not assessable: no tile
            continue
        rows += [
            {"a": r["a"], "b": r["b"], "v": r["effect_us"]},
            {"a": r["b"], "b": r["a"], "v": r["effect_us"]},
        ]
    if not rows:
        raise NotDrawn("no interaction is assessable (an estimate for every pair is needed)")
    df = pd.DataFrame(rows)
    p = (
        ggplot(df, aes("a", "b", fill="v"))
        + geom_tile()
        + scale_fill_gradient2(low="#2166ac", mid="#ffffff", high="#b2182b", midpoint=0)
        + theme_bw()
        + theme(axis_text_x=element_text(rotation=90))
        + labs(x="", y="", fill=ctx.unit)
    )
    return p, (
        "Interaction contrast T(X+a+b) − T(X+a) − T(X+b) + T(X) for every pair (symmetric). "
        "Red: together they save less than the sum of their savings (either-or); blue: more."
    )
