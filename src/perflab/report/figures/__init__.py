"""Figures: one module per family, each figure a function registered in ``FIGURES`` under
a file name with ``@figure(name, title)``; modules are discovered, so a new figure
is one new file.

A figure function takes the report Context and returns a plotnine plot and a caption saying
what it shows and how to read it, or raises NotDrawn saying why the data cannot show it (e.g.
no sequences for a PCA); None means the same without a reason. Whatever a function returns is
still checked (``perflab.report.integrity``) before it is written.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeAlias

from perflab.registry import Registry

if TYPE_CHECKING:
    from plotnine import ggplot

    from perflab.report.context import Context

#: What a figure function returns: a plot and its caption, or None when it cannot be drawn.
Result: TypeAlias = "tuple[ggplot, str] | None"


class NotDrawn(Exception):  # noqa: N818 (an outcome, not an error)
    """Raised by a figure function whose data cannot show it; the message says why."""


@dataclass
class Figure:
    name: str
    title: str
    make: Callable[[Context], Any]
    width: float = 8.0
    height: float = 5.0


FIGURES: Registry[Figure] = Registry("figure", __name__)


def figure(name: str, title: str, width: float = 8.0, height: float = 5.0) -> Callable[..., Any]:
    """Register the decorated ``fn(ctx) -> (plot, caption) | None`` as figure ``name``."""

    def deco(fn: Callable[[Context], Any]) -> Callable[[Context], Any]:
        FIGURES.add(name, Figure(name, title, fn, width, height))
        return fn

    return deco
