"""What a figure must satisfy before it is written: data to show, every legend entry drawn,
every point inside its panel, every label inside the canvas.

A figure that fails is not written; the report lists it as not drawn, with these reasons.
The checks read the plot after plotnine built it (its layers' final data and scales) and the
matplotlib figure after layout (the tight bounding box of everything drawn, with the same
renderer the PNG uses), so they see what the PNG shows, not what a figure meant to draw.
"""

from __future__ import annotations

from typing import Any

import numpy as np

#: Layers that annotate (reference lines) and never count as the figure's data.
ANNOTATION_GEOMS = {"geom_hline", "geom_vline", "geom_abline", "geom_blank"}
#: Position columns of a layer's built data; a row is drawn when those present are finite.
POSITION = ("x", "y", "xmin", "xmax", "ymin", "ymax", "xend", "yend")
#: Tolerance in pixels (anti-aliasing, rounding of the layout).
SLACK_PX = 1.0


def _finite_rows(data: Any) -> np.ndarray:
    cols = [c for c in POSITION if c in data.columns]
    if not cols or len(data) == 0:
        return np.zeros(len(data), dtype=bool)
    vals = data[cols].apply(lambda s: s.astype(float, errors="ignore"))
    return np.asarray(np.isfinite(vals.to_numpy(dtype=float)).all(axis=1))


def data_problems(plot: Any) -> list[str]:
    """Problems seen in the built plot's layers: no data row drawn, or a legend entry (a
    value of a discrete colour or fill scale) that no drawn row carries."""
    problems = []
    drawn_rows = 0
    carried: dict[str, set[Any]] = {"color": set(), "fill": set()}  # plotnine spells it so
    for layer in plot.layers:
        data = layer.data
        if data is None or len(data) == 0:
            continue
        ok = _finite_rows(data)
        if type(layer.geom).__name__ not in ANNOTATION_GEOMS:
            drawn_rows += int(ok.sum())
        for key, seen in carried.items():
            if key in data.columns:
                seen.update(data.loc[ok, key].tolist())
    if drawn_rows == 0:
        problems.append("no data to draw (every value is missing)")
    from plotnine.scales.scale_discrete import scale_discrete

    for scale in plot.scales:
        named = [a for a in scale.aesthetics if a in carried]
        if not named or not isinstance(scale, scale_discrete):
            continue
        aes = named[0]
        limits = list(scale.final_limits or [])
        if not limits:
            continue
        mapped = scale.map(np.array(limits, dtype=object))
        missing = [
            str(lim) for lim, m in zip(limits, mapped, strict=False) if m not in carried[aes]
        ]
        if missing:
            problems.append(f"legend entry without data: {', '.join(missing)}")
        if any(str(lim).strip() == "" for lim in limits):
            # a key with no words: drawn beside the panel, it reads as a stray data point
            problems.append(f"legend entry without a label ({aes})")
    return problems


def canvas_problems(figure: Any) -> list[str]:
    """Problems seen in the laid-out matplotlib figure: a point outside its panel, or any
    text (axis labels, ticks, legend) reaching past the canvas."""
    from matplotlib.collections import PathCollection

    problems = []
    # the renderer the layout engine measured with (the PNG's Agg at its dpi)
    renderer = figure._get_renderer()
    for ax in figure.axes:
        box = ax.get_window_extent(renderer)
        outside = 0
        for coll in ax.findobj(PathCollection):
            offsets = np.asarray(coll.get_offsets(), dtype=float)
            if offsets.size == 0:
                continue
            offsets = offsets[np.isfinite(offsets).all(axis=1)]
            px = coll.get_offset_transform().transform(offsets)
            outside += int(
                (
                    (px[:, 0] < box.x0 - SLACK_PX)
                    | (px[:, 0] > box.x1 + SLACK_PX)
                    | (px[:, 1] < box.y0 - SLACK_PX)
                    | (px[:, 1] > box.y1 + SLACK_PX)
                ).sum()
            )
        if outside:
            problems.append(f"{outside} point(s) outside the panel")
    tight = figure.get_tightbbox(renderer)  # inches
    dpi = figure.dpi
    w, h = figure.bbox.width, figure.bbox.height
    if (
        tight.x0 * dpi < -SLACK_PX
        or tight.y0 * dpi < -SLACK_PX
        or tight.x1 * dpi > w + SLACK_PX
        or tight.y1 * dpi > h + SLACK_PX
    ):
        problems.append(
            "labels cut at the canvas edge (drawn extent "
            f"{tight.x0 * dpi:.0f}..{tight.x1 * dpi:.0f} x {tight.y0 * dpi:.0f}.."
            f"{tight.y1 * dpi:.0f} px of {w:.0f} x {h:.0f})"
        )
    return problems
