"""A report's context assembled: the analysis with and without the logging factors, the
user's before/after figures, the fitted predictions."""

from __future__ import annotations

import pandas as pd

from perflab.analysis.analyze import Analysis, analyze
from perflab.analysis.data import Dataset
from perflab.errors import PerflabError
from perflab.report.context import Context
from perflab.report.figures import FIGURES, Figure
from perflab.report.figures.before_after import chosen_figure

#: The catalog tag of the factors the "keep logs" view leaves out.
LOGGING_TAG = "logging"


def figure_of(ctx: Context, name: str) -> Figure:
    """A registered figure, or one of this report's own."""
    fig: Figure = ctx.extra[name] if name in ctx.extra else FIGURES.get(name)
    return fig


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
