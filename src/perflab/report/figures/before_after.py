"""Before/after scatters of exact X -> X+{t} pairs, and the per-factor colour map."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
from plotnine import (
    aes,
    geom_abline,
    geom_blank,
    geom_point,
    ggplot,
    labs,
    scale_color_gradient2,
    theme_bw,
)

from perflab.report.context import Context
from perflab.report.figures import Figure, NotDrawn, Result, figure


def _partner(ctx: Context, f: str) -> str | None:
    for r in ctx.analysis["interactions"]:
        if f in (r["a"], r["b"]):
            return r["b"] if r["a"] == f else r["a"]
    return None


def _scatter(ctx: Context, f: str, colour_by: str | None) -> Result:
    d = ctx.deltas[ctx.deltas["factor"] == f]
    if d.empty:
        raise NotDrawn(f"no measured pair of sets X and X+{{{f}}}")
    d, note = ctx.sample(d)
    lo = float(min(d["before"].min(), d["after"].min()))
    hi = float(max(d["before"].max(), d["after"].max()))
    # both axes span the same range (the diagonal at 45 degrees), each with the scale's
    # own margin, so no point sits on the panel's edge
    square = pd.DataFrame({"before": [lo, hi], "after": [lo, hi]})
    if colour_by:
        d = d.assign(already=d[f"had_{colour_by}"].map({True: "yes", False: "no"}))
        p = ggplot(d, aes("before", "after", colour="already"))
    else:
        p = ggplot(d, aes("before", "after"))
    p = (
        p
        + geom_point(alpha=0.6)
        + geom_blank(aes("before", "after"), data=square, inherit_aes=False)
        + geom_abline(slope=1, intercept=0, linetype="dashed")
        + theme_bw()
        + labs(x=f"{ctx.unit} before", y=f"{ctx.unit} after adding {f}")
    )
    if colour_by:
        p = p + labs(colour=f"{colour_by}\nalready applied")
    return p, (
        f"Each point is a measured pair of treatment sets X and X+{{{f}}}{note}. On the "
        "dashed diagonal the factor changed nothing; below it, it made runs faster. "
        + (
            f"Colour: whether {colour_by} was already applied — two clusters mean the "
            "factors interact."
            if colour_by
            else ""
        )
    )


def _top_pair(ctx: Context) -> tuple[str, str | None]:
    fs = ctx.analysis["factors"]
    top = min(fs, key=lambda f: math.inf if fs[f]["effect_us"] is None else fs[f]["effect_us"])
    return top, _partner(ctx, top)


def chosen_figure(f: str, colour_by: str | None) -> Figure:
    """The before/after scatter of factor ``f`` coloured by ``colour_by``, as the user chose
    it (``--before-after F:C``): a figure of that one report, not of the registry."""
    name = f"4_before_after_{f}" + (f"_by_{colour_by}" if colour_by else "")
    title = f"Before/after scatter of {f}" + (f" coloured by {colour_by}" if colour_by else "")
    return Figure(name, title, lambda ctx: _scatter(ctx, f, colour_by))


@figure("4_before_after_scatter", "Before/after scatter of the strongest factor")
def before_after(ctx: Context) -> Result:
    top, partner = _top_pair(ctx)
    return _scatter(ctx, top, partner)


@figure("4_before_after_scatter_flip", "Before/after scatter of its strongest partner")
def before_after_flip(ctx: Context) -> Result:
    top, partner = _top_pair(ctx)
    if partner is None:
        raise NotDrawn(f"no interaction names a partner of {top}")
    return _scatter(ctx, partner, top)


@figure("7_colour", "Per-factor log2 fraction saved", height=6)
def colour(ctx: Context) -> Result:
    d = ctx.deltas[(ctx.deltas["before"] > 0) & (ctx.deltas["after"] > 0)]
    if d.empty:
        raise NotDrawn("no measured pair with positive times before and after")
    d, note = ctx.sample(d)
    d = d.assign(log2=np.log2(d["after"] / d["before"]))
    p = (
        ggplot(d, aes("before", "factor", colour="log2"))
        + geom_point(alpha=0.7)
        + scale_color_gradient2(low="#2166ac", mid="#eeeeee", high="#b2182b", midpoint=0)
        + theme_bw()
        + labs(x=f"{ctx.unit} before adding the factor", y="", colour="log2(after/before)")
    )
    return p, (
        "Each delta placed by how slow the run was before the factor, coloured by the "
        f"base-2 log of after/before{note}: blue saved time, red added it. A factor that "
        "turns red towards the fast (left) end hurts fast runs."
    )
