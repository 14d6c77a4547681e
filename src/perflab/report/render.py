"""Drawing the report's figures: each drawn once (PNG and SVG from the same matplotlib
figure), dense point layers rasterised inside the SVG, figures spread over worker processes.

plotnine's ``save`` draws the whole plot for every file it writes; drawing once halves the
work. An SVG of 20,000 points is 20,000 paths (seconds to write, megabytes to load), so a
layer of more than RASTER_POINTS points is embedded as a bitmap within the SVG, axes and text
staying vectors. Workers are forked after the analysis, so they share it without copying.
"""

from __future__ import annotations

import base64
import multiprocessing
import os
import warnings
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager
from copy import deepcopy
from pathlib import Path
from typing import Any

from perflab.report.assemble import figure_of
from perflab.report.context import Context
from perflab.report.figures import FIGURES, NotDrawn

#: Point layers with more points than this are rasterised in the SVG (never in the PNG).
RASTER_POINTS = 2_000
DPI = 100
#: Worker processes for the figures: PERFLAB_REPORT_JOBS, else one per idle core (at most 4).
JOBS_ENV = "PERFLAB_REPORT_JOBS"

#: The context a forked worker draws from (set in the parent just before forking).
_CTX: Context | None = None


def jobs() -> int:
    """Workers to draw with: on a machine already busy, more processes only contend (a
    report of 15,000 runs took longer with 2 workers than with 1 at a load of 20 on 2
    cores), so by default one per core left idle by the 1-minute load average."""
    raw = os.environ.get(JOBS_ENV)
    if raw:
        return max(1, int(raw))
    idle = (os.cpu_count() or 1) - os.getloadavg()[0]
    return max(1, min(4, int(idle + 0.5)))


def draw(ctx: Context, name: str, out: Path) -> dict[str, str]:
    """Figure ``name`` as ``out/name.png`` and ``.svg``: its entry for the page (the PNG
    inlined), or, when the data cannot show it or the drawn figure fails a check of
    ``perflab.report.integrity``, an entry with ``reason`` and no file written."""
    fig = figure_of(ctx, name)
    with _laid_out(ctx, name) as (made, problems):
        if made is None or problems:
            return {"name": name, "title": fig.title, "reason": "; ".join(problems)}
        figure, caption = made
        kwargs: dict[str, Any] = {"fname": out / f"{name}.png", "dpi": figure.get_dpi()}
        figure.savefig(**kwargs)
        _rasterise_dense(figure)
        figure.savefig(**{**kwargs, "fname": out / f"{name}.svg"})
    png = base64.b64encode((out / f"{name}.png").read_bytes()).decode()
    return {"name": name, "title": fig.title, "caption": caption, "png": png}


def inspect(ctx: Context, name: str) -> list[str]:
    """What keeps figure ``name`` from being drawn (empty when it is drawn): the reason its
    data cannot show it, or the integrity checks it fails once laid out as for the PNG."""
    with _laid_out(ctx, name) as (_, problems):
        return problems


@contextmanager
def _laid_out(ctx: Context, name: str) -> Iterator[tuple[tuple[Any, str] | None, list[str]]]:
    """Figure ``name`` built and laid out as the PNG will be (closed on exit), with the
    problems that keep it from the page; ``None`` instead of (figure, caption) when the
    figure function declined."""
    import matplotlib.pyplot as plt
    from plotnine import theme
    from plotnine._utils.context import plot_context

    from perflab.report import integrity

    fig = figure_of(ctx, name)
    try:
        made = fig.make(ctx)
    except NotDrawn as exc:
        yield None, [str(exc)]
        return
    if made is None:
        yield None, ["the data cannot show it"]
        return
    plot, caption = made
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        # a copy, as plotnine's save does: the checks read the copy's built layers
        built = deepcopy(plot) + theme(figure_size=(fig.width, fig.height), dpi=DPI)
        figure = built.draw(show=False)
        try:
            with plot_context(built).rc_context:
                _uniform_points(figure)
                _layout_once(figure, figure.get_dpi())
                problems = integrity.data_problems(built) + integrity.canvas_problems(figure)
                yield (figure, caption), problems
        finally:
            plt.close(figure)


def _layout_once(figure: Any, dpi: float) -> None:
    """Run plotnine's layout engine once, then fix the layout: ``savefig`` would otherwise
    run it for each file within a dry draw of every artist (a third pass over the figure).
    The engine measures text with the figure's Agg renderer at the PNG's dpi, as within
    the PNG's ``savefig``, so the PNG is the same; the SVG takes the same layout."""
    engine = figure.get_layout_engine()
    if engine is None:
        return
    figure.set_dpi(dpi)
    engine.execute(figure)
    figure.set_layout_engine("none")


def _uniform_points(figure: Any) -> None:
    """A point layer whose points all share colour, size and line gets those as single
    values instead of one per point (plotnine passes arrays): matplotlib then stamps one
    rendered marker per point (``draw_markers``, as for ``plot(x, y, "o")``) instead of
    drawing each point's path with its own settings, 5-10x faster for 15,000 points. Each
    marker lands on the nearest pixel (the arrays' path draws at sub-pixel positions)."""
    import numpy as np
    from matplotlib.collections import PathCollection

    for coll in figure.findobj(PathCollection):
        offsets = coll.get_offsets()
        if (
            offsets is None
            or len(offsets) < 2
            or len(coll.get_paths()) != 1
            or coll.get_array() is not None  # colours mapped from values at draw time
        ):
            continue
        props = {
            "facecolor": coll.get_facecolors(),
            "edgecolor": coll.get_edgecolors(),
            "linewidth": np.atleast_1d(coll.get_linewidths()),
            "sizes": coll.get_sizes(),
        }
        styles = coll.get_linestyles()
        if any(len(v) == 0 or (v != v[0]).any() for v in props.values()) or any(
            ls != styles[0] for ls in styles
        ):
            continue
        coll.set_facecolor(props["facecolor"][:1])
        coll.set_edgecolor(props["edgecolor"][:1])
        coll.set_linewidth(props["linewidth"][:1])
        coll.set_sizes(props["sizes"][:1])
        coll.set_linestyle([styles[0]])


def _rasterise_dense(figure: Any) -> None:
    """Dense point layers and meshes (a colour bar's gradient: SVG has no Gouraud shading, so
    matplotlib writes gradients per triangle, 2 MB and 1-2 s a figure) become bitmaps inside
    the SVG; axes, text and legends stay vectors."""
    from matplotlib.collections import Collection, QuadMesh, TriMesh

    for coll in figure.findobj(Collection):
        offsets = coll.get_offsets()
        if isinstance(coll, QuadMesh | TriMesh) or (
            offsets is not None and len(offsets) > RASTER_POINTS
        ):
            coll.set_rasterized(True)


def _draw_in_worker(name: str, out: Path) -> dict[str, str]:
    assert _CTX is not None
    return draw(_CTX, name, out)


def render_figures(
    ctx: Context, out: Path, workers: int | None = None, names: list[str] | None = None
) -> tuple[list[dict[str, str]], list[dict[str, str]]]:
    """Every registered figure and the report's own (or those ``names``) as PNG and SVG in
    ``out``, in registry order; returns the drawn and the not drawn (name, title, reason)."""
    global _CTX
    out.mkdir(parents=True, exist_ok=True)
    names = [*FIGURES, *ctx.extra] if names is None else names
    workers = min(workers or jobs(), len(names))
    if workers > 1:
        # imported before forking, so each worker does not import (and warm) them again
        import matplotlib.pyplot  # noqa: F401
        import plotnine  # noqa: F401

        _CTX = ctx
        try:
            fork = multiprocessing.get_context("fork")
            with ProcessPoolExecutor(workers, mp_context=fork) as pool:
                entries = list(pool.map(_draw_in_worker, names, [out] * len(names)))
        finally:
            _CTX = None
    else:
        entries = [draw(ctx, name, out) for name in names]
    drawn = [e for e in entries if "reason" not in e]
    skipped = [e for e in entries if "reason" in e]
    return drawn, skipped
