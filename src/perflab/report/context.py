"""What every figure draws from: the dataset, its analysis, deltas and model predictions."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from perflab.analysis.core import analyze
from perflab.analysis.data import Dataset
from perflab.analysis.deltas import deltas
from perflab.analysis.models import ols, predict, time_covariates

#: Scatter plots draw at most this many points (a random sample; captions say so).
MAX_POINTS = 20_000
#: The seed's "keep logs" view leaves out these factors when present.
LOG_FACTORS = ("cfg_no_init_logging", "cfg_noop_logging", "src_submit_biglogs_remove")


@dataclass
class Context:
    ds: Dataset
    analysis: dict[str, Any]
    deltas: pd.DataFrame
    without: list[str]
    analysis_without: dict[str, Any] | None
    runs: pd.DataFrame
    predictions: dict[str, np.ndarray] = field(default_factory=dict)

    def sample(self, df: pd.DataFrame) -> tuple[pd.DataFrame, str]:
        if len(df) <= MAX_POINTS:
            return df, ""
        return df.sample(
            MAX_POINTS, random_state=0
        ), f" (a random {MAX_POINTS:,} of {len(df):,} shown)"


def build(
    ds: Dataset,
    runs: pd.DataFrame,
    without: list[str] | None = None,
    analysis: dict[str, Any] | None = None,
) -> Context:
    a = analysis or analyze(ds)
    chosen = without if without is not None else [f for f in LOG_FACTORS if f in ds.factors]
    a_without = None
    if chosen:
        try:
            a_without = analyze(ds, without=chosen, n_boot=200)
        except Exception:  # too few runs left: that figure is skipped, the report goes on
            a_without = None
    ctx = Context(ds, a, deltas(ds), chosen, a_without, runs)
    tcov = time_covariates(ds)
    for name, interactions, extra in (("linear", False, tcov), ("pairwise", True, None)):
        fit = ols(ds, interactions, extra=extra)
        ctx.predictions[name] = predict(fit, ds.x, ds.factors, interactions, extra)
    return ctx
