"""What every figure draws from: the dataset, its analysis (with the fitted models), deltas."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np
import pandas as pd

from perflab.analysis.analyze import Analysis
from perflab.analysis.data import Dataset
from perflab.run.record import metric_unit

#: Scatter plots draw at most this many points (a random sample; captions say so).
MAX_POINTS = 20_000


@dataclass
class Context:
    ds: Dataset
    fit: Analysis
    without: list[str]
    analysis_without: dict[str, Any] | None
    runs: pd.DataFrame
    predictions: dict[str, np.ndarray] = field(default_factory=dict)
    #: Figures of this report only (the user's before/after choices): name ->
    #: ``perflab.report.figures.Figure`` (not imported here: figures import this module).
    extra: dict[str, Any] = field(default_factory=dict)

    @cached_property
    def analysis(self) -> dict[str, Any]:
        # built once: every figure reads it, several times
        return self.fit.to_json()

    @property
    def unit(self) -> str:
        """The unit of the metric analysed ("µs/task", "s", …): every axis and caption's."""
        return metric_unit(self.ds.metric)

    @property
    def deltas(self) -> pd.DataFrame:
        return self.fit.deltas

    def sample(self, df: pd.DataFrame) -> tuple[pd.DataFrame, str]:
        if len(df) <= MAX_POINTS:
            return df, ""
        return df.sample(
            MAX_POINTS, random_state=0
        ), f" (a random {MAX_POINTS:,} of {len(df):,} shown)"
