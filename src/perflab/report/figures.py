"""The seed's figures, one function each, registered in ``FIGURES`` by the seed's file name.

A figure function takes the report Context and returns a plotnine plot and a caption saying
what it shows and how to read it, or None when the data cannot show it (e.g. no sequences
for a PCA).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from plotnine import (
    aes,
    coord_flip,
    element_text,
    geom_abline,
    geom_boxplot,
    geom_col,
    geom_errorbar,
    geom_hline,
    geom_line,
    geom_point,
    geom_rect,
    geom_segment,
    geom_smooth,
    geom_text,
    geom_tile,
    ggplot,
    labs,
    position_dodge,
    scale_color_gradient2,
    scale_fill_gradient2,
    scale_x_continuous,
    scale_y_continuous,
    theme,
    theme_bw,
)

from perflab.registry import Registry
from perflab.report.context import Context

Result = tuple[ggplot, str] | None


@dataclass
class Figure:
    name: str
    title: str
    make: Callable[[Context], Result]
    width: float = 8.0
    height: float = 5.0


FIGURES: Registry[Figure] = Registry("figure")


def figure(name: str, title: str, width: float = 8.0, height: float = 5.0) -> Callable[..., Any]:
    def deco(fn: Callable[[Context], Result]) -> Callable[[Context], Result]:
        FIGURES.register(name)(Figure(name, title, fn, width, height))
        return fn

    return deco


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


def _bars(df: pd.DataFrame, dodge: bool = False) -> ggplot:
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
        + labs(x="", y="change in µs/task from adding the factor (negative = faster)")
    )


@figure("1_means", "Mean effect of each factor")
def means(ctx: Context) -> Result:
    p = _bars(_effects(ctx.analysis)) + theme(legend_position="none")
    return p, (
        "Average change in µs/task from adding each factor to a treatment set drawn like "
        "the measured ones (average marginal effect from the pairwise model), with 95% "
        "confidence intervals. Bars left of zero make runs faster."
    )


@figure("1_means_keep_logs", "Mean effects without the logging factors")
def means_keep_logs(ctx: Context) -> Result:
    if ctx.analysis_without is None:
        return None
    p = _bars(_effects(ctx.analysis_without)) + theme(legend_position="none")
    return p, (
        f"The same, using only the runs without {', '.join(ctx.without)}: what each other "
        "factor does when logging stays on. This is not the first plot minus some bars: "
        "factors interact."
    )


@figure("1_means_both", "Mean effects: all runs vs without the logging factors")
def means_both(ctx: Context) -> Result:
    if ctx.analysis_without is None:
        return None
    keep = set(ctx.analysis_without["factors"])
    both = pd.concat(
        [
            _effects(ctx.analysis, "all runs").loc[lambda d: d["factor"].isin(keep)],
            _effects(ctx.analysis_without, f"without {', '.join(ctx.without)}"),
        ]
    )
    return _bars(both, dodge=True) + labs(fill=""), (
        "Both views side by side: a factor whose bar grows without the logging factors saves "
        "more when logging is on."
    )


def _partner(ctx: Context, f: str) -> str | None:
    for r in ctx.analysis["interactions"]:
        if f in (r["a"], r["b"]):
            return r["b"] if r["a"] == f else r["a"]
    return None


def _scatter(ctx: Context, f: str, colour_by: str | None) -> Result:
    d = ctx.deltas[ctx.deltas["factor"] == f]
    if d.empty:
        return None
    d, note = ctx.sample(d)
    d = d.assign(already=d[f"had_{colour_by}"].map({True: "yes", False: "no"}) if colour_by else "")
    lo = float(min(d["before"].min(), d["after"].min()))
    hi = float(max(d["before"].max(), d["after"].max()))
    p = (
        ggplot(d, aes("before", "after", colour="already"))
        + geom_point(alpha=0.6)
        + geom_abline(slope=1, intercept=0, linetype="dashed")
        + theme_bw()
        + labs(
            x="µs/task before",
            y=f"µs/task after adding {f}",
            colour=f"{colour_by} already applied" if colour_by else "",
        )
    )
    p = p + scale_x_continuous(limits=(lo, hi)) + scale_y_continuous(limits=(lo, hi))
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
    top = min(ctx.analysis["factors"], key=lambda f: ctx.analysis["factors"][f]["effect_us"])
    return top, _partner(ctx, top)


@figure("4_before_after_scatter", "Before/after scatter of the strongest factor")
def before_after(ctx: Context) -> Result:
    top, partner = _top_pair(ctx)
    return _scatter(ctx, top, partner)


@figure("4_before_after_scatter_flip", "Before/after scatter of its strongest partner")
def before_after_flip(ctx: Context) -> Result:
    top, partner = _top_pair(ctx)
    return _scatter(ctx, partner, top) if partner else None


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
        return None
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
        + labs(x="", y="tasks/s" if rate else "µs/task")
    )
    how = (
        "greedily, the best next factor first"
        if which == "greedy"
        else (
            "by the seed's 'nice' order: environment, safe config, source changes that keep "
            "features, config that disables features, source changes that remove features"
        )
    )
    unit = (
        "tasks/s: the same path in throughput, where late small savings in µs/task become "
        "large gains"
        if rate
        else "µs/task"
    )
    return p, f"From the untreated set to the predicted best, adding factors {how}; in {unit}."


def _treemap(ctx: Context, which: str) -> Result:
    steps = ctx.analysis["paths"][which]
    if len(steps) < 2:
        return None
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
        "The untreated run's µs/task as an area: what the path's factors saved, and what "
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
    figure(f"6_shap{_suffix}", f"{_which} path in µs/task")(
        lambda ctx, w=_which: _waterfall(ctx, w, rate=False)
    )
    figure(f"6_shap_by_rate{_suffix}", f"{_which} path in tasks/s")(
        lambda ctx, w=_which: _waterfall(ctx, w, rate=True)
    )
    figure(f"6_shap_treemap{_suffix}", f"{_which} path as areas")(
        lambda ctx, w=_which: _treemap(ctx, w)
    )


@figure("7_colour", "Per-factor log2 fraction saved", height=6)
def colour(ctx: Context) -> Result:
    d = ctx.deltas[(ctx.deltas["before"] > 0) & (ctx.deltas["after"] > 0)]
    if d.empty:
        return None
    d, note = ctx.sample(d)
    d = d.assign(log2=np.log2(d["after"] / d["before"]))
    p = (
        ggplot(d, aes("before", "factor", colour="log2"))
        + geom_point(alpha=0.7)
        + scale_color_gradient2(low="#2166ac", mid="#eeeeee", high="#b2182b", midpoint=0)
        + theme_bw()
        + labs(x="µs/task before adding the factor", y="", colour="log2(after/before)")
    )
    return p, (
        "Each delta placed by how slow the run was before the factor, coloured by the "
        f"base-2 log of after/before{note}: blue saved time, red added it. A factor that "
        "turns red towards the fast (left) end hurts fast runs."
    )


def _fit_plot(ctx: Context, name: str) -> Result:
    df = pd.DataFrame({"measured": ctx.ds.y, "predicted": ctx.predictions[name]})
    df, note = ctx.sample(df)
    r2 = ctx.analysis["models"][name]["r2"]
    p = (
        ggplot(df, aes("measured", "predicted"))
        + geom_point(alpha=0.3)
        + geom_abline(slope=1, intercept=0, linetype="dashed")
        + theme_bw()
        + labs(x="measured µs/task", y="predicted µs/task")
    )
    what = (
        "factors plus drift terms (hours, time of day)"
        if name == "linear"
        else "factors and every pairwise interaction"
    )
    return (
        p,
        f"Linear model of µs/task on {what}: R² = {r2:.3f}{note}. "
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
        + labs(x="", y="µs/task", fill="")
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
        rows += [
            {"a": r["a"], "b": r["b"], "v": r["effect_us"]},
            {"a": r["b"], "b": r["a"], "v": r["effect_us"]},
        ]
    if not rows:
        return None
    df = pd.DataFrame(rows)
    p = (
        ggplot(df, aes("a", "b", fill="v"))
        + geom_tile()
        + scale_fill_gradient2(low="#2166ac", mid="#ffffff", high="#b2182b", midpoint=0)
        + theme_bw()
        + theme(axis_text_x=element_text(rotation=90))
        + labs(x="", y="", fill="µs/task")
    )
    return p, (
        "Interaction contrast T(X+a+b) − T(X+a) − T(X+b) + T(X) for every pair (symmetric). "
        "Red: together they save less than the sum of their savings (either-or); blue: more."
    )


@figure("8_pca_biplot", "PCA of path vectors (biplot)")
def pca_biplot(ctx: Context) -> Result:
    pca = ctx.analysis["pca"]
    if not pca:
        return None
    sc = pd.DataFrame(pca["scores"], columns=["pc1", "pc2"][: len(pca["scores"][0])])
    if "pc2" not in sc:
        return None
    ld = pd.DataFrame(
        [
            {"factor": f, "x": v[0], "y": v[1] if len(v) > 1 else 0.0}
            for f, v in pca["loadings"].items()
        ]
    )
    scale = float(np.abs(sc[["pc1", "pc2"]]).max().max()) or 1.0
    ld[["x", "y"]] *= scale
    evr = pca["explained_variance_ratio"]
    p = (
        ggplot()
        + geom_point(aes("pc1", "pc2"), data=sc, alpha=0.5)
        + geom_segment(aes(x=0, y=0, xend="x", yend="y"), data=ld, colour="#b2182b")
        + geom_text(aes("x", "y", label="factor"), data=ld, size=7, colour="#b2182b")
        + theme_bw()
        + labs(x=f"PC1 ({evr[0]:.0%})", y=f"PC2 ({evr[1]:.0%})")
    )
    return p, (
        "Each point is a measured sequence (its vector of per-factor deltas along the path); "
        "arrows are factor loadings. Factors pointing opposite ways trade off: either-or."
    )


@figure("8_pca_screeplot", "PCA scree plot")
def pca_scree(ctx: Context) -> Result:
    pca = ctx.analysis["pca"]
    if not pca:
        return None
    evr = pca["explained_variance_ratio"]
    df = pd.DataFrame({"pc": np.arange(1, len(evr) + 1), "v": evr})
    p = (
        ggplot(df, aes("pc", "v"))
        + geom_col()
        + geom_line()
        + theme_bw()
        + labs(x="principal component", y="share of variance")
    )
    return p, "How much of the path vectors' variance each successive component captures."


@figure("shapley", "Shapley attribution")
def shapley_bars(ctx: Context) -> Result:
    sh = ctx.analysis["shapley"]
    if not sh["values"]:
        return None
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
        + labs(x="", y="µs/task attributed")
    )
    return p, (
        f"Exact Shapley values: each factor's share of the {sh['total_us']:,.1f} µs/task "
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
        return None
    df = df[df["key"].isin(keys)]
    df["set"] = df["key"].map(lambda k: ",".join(ctx.ds.names_of(int(k))) or "untreated")
    p = (
        ggplot(df, aes("set", "y"))
        + geom_boxplot()
        + coord_flip()
        + theme_bw()
        + labs(x="", y="µs/task")
    )
    return p, (
        "Spread of replicate runs of the same treatment set (the most replicated sets). A "
        "spread wider than an effect means that effect is within the noise."
    )


@figure("drift", "µs/task over time")
def drift(ctx: Context) -> Result:
    if np.ptp(ctx.ds.t) <= 0:
        return None
    df = pd.DataFrame(
        {
            "t": pd.to_datetime(ctx.ds.t, unit="s"),
            "y": ctx.ds.y,
            "resid": ctx.ds.y - ctx.predictions["pairwise"],
        }
    )
    df, note = ctx.sample(df)
    p = (
        ggplot(df, aes("t", "resid"))
        + geom_point(alpha=0.3)
        + geom_smooth(method="lowess", colour="#b2182b")
        + geom_hline(yintercept=0)
        + theme_bw()
        + labs(x="time", y="µs/task − pairwise prediction")
    )
    return p, (
        f"Residuals of the pairwise model over time{note}: a trend is drift of the machine, "
        "not of the treatments (the run order was randomised)."
    )
