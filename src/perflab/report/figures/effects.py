"""Effect bars: each factor's mean effect with its interval, all runs and without the
logging factors (the ``1_means`` figures)."""

from __future__ import annotations

from typing import Any

import pandas as pd
from plotnine import (
    aes,
    coord_flip,
    geom_col,
    geom_errorbar,
    geom_hline,
    ggplot,
    labs,
    position_dodge,
    scale_fill_gradient2,
    theme,
    theme_bw,
)

from perflab.report.context import Context
from perflab.report.figures import NotDrawn, Result, figure


def _effects(a: dict[str, Any], label: str = "") -> pd.DataFrame:
    rows = [
        {
            "factor": f,
            "effect": v["effect_us"],
            "lo": v["ci_low"],
            "hi": v["ci_high"],
            "mean_delta": v["mean_delta_us"],
            "view": label,
        }
        for f, v in a["factors"].items()
    ]
    df = pd.DataFrame(rows)
    # An unknown CI (null in the analysis) is drawn as no error bar, not as a category.
    for col in ("effect", "lo", "hi", "mean_delta"):
        df[col] = pd.to_numeric(df[col], errors="coerce").astype(float)
    return df.sort_values("effect")


def _bars(df: pd.DataFrame, unit: str, dodge: bool = False) -> ggplot:
    order = list(df.groupby("factor")["effect"].mean().sort_values().index)[::-1]
    df = df.assign(factor=pd.Categorical(df["factor"], categories=order))
    pos = position_dodge(width=0.8)
    p = ggplot(df, aes("factor", "effect", fill="view" if dodge else "effect"))
    p += geom_col(position=pos, width=0.75) if dodge else geom_col(width=0.75)
    p += geom_errorbar(aes(ymin="lo", ymax="hi"), width=0.3, position=pos)
    if not dodge:
        p += scale_fill_gradient2(low="#2166ac", mid="#dddddd", high="#b2182b", midpoint=0)
    return (
        p
        + coord_flip()
        + geom_hline(yintercept=0)
        + theme_bw()
        + labs(x="", y=f"change in {unit} from adding the factor (negative = faster)")
    )


@figure("1_means", "Mean effect of each factor")
def means(ctx: Context) -> Result:
    if all(v["effect_us"] is None for v in ctx.analysis["factors"].values()):
        raise NotDrawn("no factor's effect is estimable (each is aliased with others)")
    p = _bars(_effects(ctx.analysis), ctx.unit) + theme(legend_position="none")
    return p, (
        f"Average change in {ctx.unit} from adding each factor to a treatment set drawn like "
        "the measured ones (average marginal effect from the pairwise model), with 95% "
        "confidence intervals. Bars left of zero make runs faster."
    )


def _without(ctx: Context) -> dict[str, Any]:
    """The analysis without the logging factors, when it estimates at least one effect."""
    if not ctx.without:
        raise NotDrawn("no factor is tagged as logging (and --without named none)")
    gone = ", ".join(ctx.without)
    a = ctx.analysis_without
    if a is None:
        raise NotDrawn(f"too few runs without {gone} to analyse")
    if not a["factors"] or all(v["effect_us"] is None for v in a["factors"].values()):
        raise NotDrawn(
            f"the {a['dataset']['runs']} runs without {gone} ({a['dataset']['sets']} sets) "
            "estimate no factor's effect"
        )
    return a


@figure("1_means_keep_logs", "Mean effects without the logging factors")
def means_keep_logs(ctx: Context) -> Result:
    p = _bars(_effects(_without(ctx)), ctx.unit) + theme(legend_position="none")
    return p, (
        f"The same, using only the runs without {', '.join(ctx.without)}: what each other "
        "factor does when logging stays on. This is not the first plot minus some bars: "
        "factors interact."
    )


@figure("1_means_both", "Mean effects: all runs vs without the logging factors")
def means_both(ctx: Context) -> Result:
    without = _without(ctx)
    keep = {f for f, v in without["factors"].items() if v["effect_us"] is not None}
    both = pd.concat(
        [
            _effects(ctx.analysis, "all runs").loc[lambda d: d["factor"].isin(keep)],
            _effects(without, f"without {', '.join(ctx.without)}").loc[
                lambda d: d["factor"].isin(keep)
            ],
        ]
    )
    both = both[both["effect"].notna()]
    if both["view"].nunique() < 2:
        raise NotDrawn("no factor has an estimated effect in both views")
    return _bars(both, ctx.unit, dodge=True) + labs(fill=""), (
        "Both views side by side: a factor whose bar grows without the logging factors saves "
        "more when logging is on."
    )
