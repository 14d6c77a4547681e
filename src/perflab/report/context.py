"""What every figure draws from: the dataset, its analysis (with the fitted models), deltas."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np
import pandas as pd

from perflab.analysis.analyze import Analysis, analyze
from perflab.analysis.data import Dataset
from perflab.errors import PerflabError
from perflab.report.figures import FIGURES, Figure

#: Scatter plots draw at most this many points (a random sample; captions say so).
MAX_POINTS = 20_000
#: The catalog tag of the factors the seed's "keep logs" view leaves out.
LOGGING_TAG = "logging"


@dataclass
class Context:
    ds: Dataset
    fit: Analysis
    without: list[str]
    analysis_without: dict[str, Any] | None
    runs: pd.DataFrame
    predictions: dict[str, np.ndarray] = field(default_factory=dict)
    #: Figures of this report only (the user's before/after choices), by name.
    extra: dict[str, Figure] = field(default_factory=dict)

    def figure(self, name: str) -> Figure:
        """A registered figure, or one of this report's own."""
        return self.extra[name] if name in self.extra else FIGURES.get(name)

    @cached_property
    def analysis(self) -> dict[str, Any]:
        # built once: every figure reads it, several times
        return self.fit.to_json()

    @property
    def deltas(self) -> pd.DataFrame:
        return self.fit.deltas

    def sample(self, df: pd.DataFrame) -> tuple[pd.DataFrame, str]:
        if len(df) <= MAX_POINTS:
            return df, ""
        return df.sample(
            MAX_POINTS, random_state=0
        ), f" (a random {MAX_POINTS:,} of {len(df):,} shown)"


def parse_before_after(specs: list[str]) -> list[tuple[str, str | None]]:
    """``FACTOR[:COLOUR_BY]`` strings as (factor, colour_by or None)."""
    out: list[tuple[str, str | None]] = []
    for spec in specs:
        f, _, by = spec.partition(":")
        if not f.strip() or (_ and not by.strip()):
            raise PerflabError(f"--before-after {spec!r}: expected FACTOR or FACTOR:COLOUR_BY")
        out.append((f.strip(), by.strip() or None))
    return out


def check_before_after(ds: Dataset, chosen: list[tuple[str, str | None]]) -> None:
    """Every factor named in a before/after choice is one of the dataset's (else one line
    naming it and the known factors, before anything is written)."""
    for f, by in chosen:
        for name in (f, by):
            if name is not None and name not in ds.factors:
                spec = f + (f":{by}" if by else "")
                raise PerflabError(
                    f"--before-after {spec}: {name!r} is not among the analysed factors "
                    f"({', '.join(ds.factors)})"
                )
        if by == f:
            raise PerflabError(f"--before-after {f}:{by}: colour by another factor")


def build(
    ds: Dataset,
    runs: pd.DataFrame,
    without: list[str] | None = None,
    analysis: Analysis | None = None,
    before_after: list[tuple[str, str | None]] | None = None,
) -> Context:
    """The context of one report; ``without`` defaults to the catalog's logging factors;
    ``before_after`` adds a before/after scatter per (factor, colour_by or None)."""
    from perflab.report.figures.before_after import chosen_figure

    check_before_after(ds, before_after or [])
    a = analysis or analyze(ds)
    chosen = without if without is not None else ds.meta.tagged(LOGGING_TAG)
    chosen = [f for f in chosen if f in ds.factors]
    a_without = None
    if chosen:
        try:
            a_without = analyze(ds, without=chosen, n_boot=200).to_json()
        except PerflabError:  # too few runs left: that figure is skipped, the report goes on
            a_without = None
    ctx = Context(ds, a, chosen, a_without, runs)
    for f, by in before_after or []:
        fig = chosen_figure(f, by)
        ctx.extra[fig.name] = fig
    for name in ("linear", "pairwise"):
        ctx.predictions[name] = a.fitted(name)
    return ctx
