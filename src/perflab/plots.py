"""One way to save a plotnine figure: a PNG (for pages and terminals that inline it) and an
SVG (for papers) beside it, with plotnine's chatter silenced."""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any


def save_plot(
    plot: Any, stem: Path, width: float = 8, height: float = 4.5, dpi: int = 100
) -> list[Path]:
    """Write ``stem.png`` and ``stem.svg`` (its folder made if missing); the two paths."""
    stem.parent.mkdir(parents=True, exist_ok=True)
    paths = [stem.with_name(f"{stem.name}.{ext}") for ext in ("png", "svg")]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # plotnine's size and font notices
        for path in paths:
            plot.save(path, width=width, height=height, dpi=dpi, verbose=False)
    return paths
