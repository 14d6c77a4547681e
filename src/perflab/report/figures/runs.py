"""The runs themselves: Shapley bars, replicate spread, drift over time."""

from __future__ import annotations

import numpy as np
import pandas as pd
from plotnine import (
    aes,
    coord_flip,
    geom_col,
    geom_hline,
    geom_line,
    geom_point,
    geom_segment,
    ggplot,
    labs,
    theme_bw,
)

from perflab.report.context import Context
from perflab.report.figures import NotDrawn, Result, figure


@figure("shapley", "Shapley attribution")
def shapley_bars(ctx: Context) -> Result:
    sh = ctx.analysis["shapley"]
    if not sh["values"]:
        raise NotDrawn("the best set is the untreated set: nothing to attribute")
    df = pd.DataFrame({"factor": list(sh["values"]), "v": list(sh["values"].values())})
    df["factor"] = pd.Categorical(
        df["factor"], categories=list(df.sort_values("v")["factor"])[::-1]
    )
    p = (
        ggplot(df, aes("factor", "v"))
        + geom_col(fill="#4393c3")
        + coord_flip()
        + geom_hline(yintercept=0)
        + theme_bw()
        + labs(x="", y=f"{ctx.unit} attributed")
    )
    return p, (
        f"Exact Shapley values: each factor's share of the {sh['total_us']:,.1f} {ctx.unit} "
        f"between {{{', '.join(sh['from']) or 'untreated'}}} and {{{', '.join(sh['to'])}}}, "
        f"averaged over every order of applying them ({sh['measured_sets']} of "
        f"{sh['sets']} subsets measured, the rest from the pairwise model). They sum to the total."
    )


@figure("replicates", "Replicate spread per treatment set", height=6)
def replicates(ctx: Context) -> Result:
    df = pd.DataFrame({"key": ctx.ds.keys, "y": ctx.ds.y})
    counts = df["key"].value_counts()
    keys = list(counts[counts >= 2].index[:30])
    if not keys:
        raise NotDrawn("no treatment set was run more than once")
    df = df[df["key"].isin(keys)]
    df["set"] = df["key"].map(lambda k: ",".join(ctx.ds.names_of(int(k))) or "untreated")
    q = df.groupby("set")["y"].quantile(np.array([0.0, 0.25, 0.5, 0.75, 1.0])).unstack()
    q.columns = ["lo", "q1", "med", "q3", "hi"]
    q = q.reset_index()
    # one layer each for every set at once (group=1): plotnine's boxplot draws per set, and
    # with coord_flip that was a third of the report's drawing time
    p = (
        ggplot(q, aes(y="set", group=1))
        + geom_segment(aes(x="lo", xend="hi", yend="set"), colour="#555555")
        + geom_segment(aes(x="q1", xend="q3", yend="set"), colour="#92c5de", size=4)
        + geom_point(aes(x="y", y="set"), data=df, size=1, alpha=0.5)
        + geom_point(aes(x="med"), colour="#b2182b", size=2.5, shape="|")
        + theme_bw()
        + labs(x=ctx.unit, y="")
    )
    return p, (
        "Spread of replicate runs of the same treatment set (the most replicated sets): "
        "each run a dot, the range a line, the middle half a bar, the median a red tick. A "
        "spread wider than an effect means that effect is within the noise."
    )


@figure("drift", "The metric over time")
def drift(ctx: Context) -> Result:
    span = float(np.ptp(ctx.ds.t))
    if span <= 0:
        raise NotDrawn("the runs have no time span (no timestamps)")
    # Elapsed time on a plain axis: mizani's datetime breaks fail on spans of seconds.
    unit, scale = (
        ("hours", 3600.0) if span > 7200 else ("minutes", 60.0) if span > 120 else ("seconds", 1.0)
    )
    df = pd.DataFrame(
        {
            "t": (ctx.ds.t - ctx.ds.t.min()) / scale,
            "y": ctx.ds.y,
            "resid": ctx.ds.y - ctx.predictions["pairwise"],
        }
    )
    df, note = ctx.sample(df)
    p = (
        ggplot(df, aes("t", "resid"))
        + geom_point(alpha=0.3)
        + geom_line(aes("t", "resid"), data=_trend(df), colour="#b2182b", size=1)
        + geom_hline(yintercept=0)
        + theme_bw()
        + labs(x=f"{unit} since the first run", y=f"{ctx.unit} − pairwise prediction")
    )
    return p, (
        f"Residuals of the pairwise model over time{note}: a trend is drift of the machine, "
        "not of the treatments (the run order was randomised)."
    )


def _trend(df: pd.DataFrame) -> pd.DataFrame:
    """The lowess trend of the residuals (span 2/3, as geom_smooth's), with statsmodels'
    ``delta``: points closer in time than 1% of the span are interpolated, not refitted,
    which makes 20,000 points take milliseconds rather than tens of seconds."""
    from statsmodels.nonparametric.smoothers_lowess import lowess

    t = df["t"].to_numpy(dtype=float)
    fit = lowess(df["resid"].to_numpy(), t, frac=2 / 3, delta=0.01 * float(np.ptp(t)))
    return pd.DataFrame({"t": fit[:, 0], "resid": fit[:, 1]})
