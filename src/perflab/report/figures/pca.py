"""PCA of path vectors: a biplot and a scree plot."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from plotnine import (
    aes,
    geom_col,
    geom_line,
    geom_point,
    geom_segment,
    geom_text,
    ggplot,
    labs,
    theme_bw,
)

from perflab.report.context import Context
from perflab.report.figures import NotDrawn, Result, figure

NO_PATHS = (
    "fewer than 3 paths from the untreated set with every step measured (the campaign's "
    "sequences, or chains of exact X -> X+{t} pairs reconstructed from the runs)"
)


def _pca(ctx: Context) -> Any:
    """The analysis' PCA of path vectors; not drawn without enough paths."""
    pca = ctx.analysis["pca"]
    if not pca:
        raise NotDrawn(NO_PATHS)
    return pca


@figure("8_pca_biplot", "PCA of path vectors (biplot)")
def pca_biplot(ctx: Context) -> Result:
    pca = _pca(ctx)
    sc = pd.DataFrame(pca["scores"], columns=["pc1", "pc2"][: len(pca["scores"][0])])
    if "pc2" not in sc:
        raise NotDrawn("the path vectors have a single principal component")
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
        "Each point is a path from the untreated set (its vector of per-factor deltas along "
        f"the path; {pca.get('note') or 'the campaign sequences'}); arrows are factor "
        "loadings. Factors pointing opposite ways trade off: either-or."
    )


@figure("8_pca_screeplot", "PCA scree plot")
def pca_scree(ctx: Context) -> Result:
    pca = _pca(ctx)
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
