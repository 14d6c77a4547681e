"""``stencil_1d``: ``width`` columns × n ÷ width steps; each task takes its own and its two
neighbours' results from the previous step (width 0: one column per worker)."""

from __future__ import annotations

from typing import ClassVar

from perflab.options import Opt
from perflab.workloads import WORKLOADS
from perflab.workloads.dag import DagWorkload, Graph, Submit


@WORKLOADS.register
class Stencil1d(DagWorkload):
    name = "stencil_1d"
    params: ClassVar[dict[str, Opt]] = {
        **DagWorkload.params,
        "width": Opt(default=0, help="Columns of the stencil (0: one per worker)."),
    }

    def build(self, after: Submit, n: int, slots: int) -> Graph:
        width = int(self.p["width"]) or slots
        steps = max(1, n // width)
        row = [after([]) for _ in range(width)]
        for _ in range(steps - 1):
            row = [after(row[max(0, i - 1) : i + 2]) for i in range(width)]
        return Graph(row, tasks=steps * width, depth=steps)
