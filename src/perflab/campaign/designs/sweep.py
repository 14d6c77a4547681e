"""``sweep``: one or more numeric factors over their levels, from a base set.

``--factors workers=1..4,cfg_prefetch`` with ``mode=grid`` (the default) runs every
combination of levels; ``mode=ofat`` (one factor at a time, as the post-processing study's
charts do) varies each factor alone while the others stay at their base level
(``base_levels``, default each factor's first level).  ``base=a+b`` adds treatments to
every set.  The levels are kept as numbers in the campaign (``design_info["sweep"]``);
replicates interleave like any design.
"""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np

from perflab.campaign.designs import DESIGNS
from perflab.campaign.designs.base import Constraints, Design, keep_valid
from perflab.errors import PerflabError
from perflab.factors.catalog import Catalog
from perflab.factors.levels import number, sweep_levels
from perflab.options import Opt

MODES = ("grid", "ofat")
MAX_GRID_FACTORS = 3


@DESIGNS.register
class Sweep(Design):
    name = "sweep"
    options = {
        "mode": Opt(
            choices=MODES,
            default="grid",
            help="grid: every combination; ofat: one factor at a time.",
        ),
        "base": Opt(default="", help="Treatments in every set, joined by + (e.g. a+b)."),
        "base_levels": Opt(
            default="", help="ofat: each factor's level when not varied, e.g. workers=2+f=1."
        ),
    }
    sweep: dict[str, list[int | float]]
    base: list[str]
    base_levels: dict[str, int | float]

    def expand(self, factors: list[str], catalog: Catalog) -> list[str]:
        mode = str(self.opts["mode"])  # one of MODES: checked with the options
        sweep: dict[str, list[int | float]] = {}
        for text in factors:
            name, levels = sweep_levels(text, catalog)
            if name in sweep:
                raise PerflabError(f"design 'sweep': factor {name!r} given twice")
            sweep[name] = levels
        if mode == "grid" and len(sweep) > MAX_GRID_FACTORS:
            raise PerflabError(
                f"design 'sweep': a grid of {len(sweep)} factors is too many "
                f"(at most {MAX_GRID_FACTORS}; use mode=ofat)"
            )
        self.base = [b.strip() for b in str(self.opts["base"]).split("+") if b.strip()]
        for b in self.base:
            if b.partition("=")[0] in sweep:
                raise PerflabError(f"design 'sweep': base treatment {b!r} is also swept")
        self.base_levels = self._base_levels(sweep)
        self.info["sweep"] = sweep
        self.info["mode"] = mode
        self.info["base"] = self.base
        self.info["base_levels"] = self.base_levels
        self.sweep = sweep
        return [f"{n}={v}" for n, levels in sweep.items() for v in levels] + self.base

    def _base_levels(self, sweep: dict[str, list[int | float]]) -> dict[str, int | float]:
        out = {n: levels[0] for n, levels in sweep.items()}
        for item in filter(None, (s.strip() for s in str(self.opts["base_levels"]).split("+"))):
            name, _, raw = item.partition("=")
            value = number(raw)
            if value is None or name not in sweep or value not in sweep[name]:
                raise PerflabError(
                    f"design 'sweep': base_levels {item!r} is not a swept factor's level"
                )
            out[name] = value
        return out

    def generate(self, cons: Constraints, rng: np.random.Generator) -> list[list[str]]:
        if not hasattr(self, "sweep"):
            raise PerflabError("design 'sweep': expand() the factors before generate()")
        names = list(self.sweep)
        if self.info["mode"] == "grid":
            grid = itertools.product(*(self.sweep[n] for n in names))
            combos = [dict(zip(names, c, strict=True)) for c in grid]
        else:
            combos = []
            for n in names:
                for v in self.sweep[n]:
                    combo: dict[str, Any] = {**self.base_levels, n: v}
                    if combo not in combos:
                        combos.append(combo)
        sets = [sorted([f"{n}={v}" for n, v in c.items()] + self.base) for c in combos]
        return keep_valid(sets, cons, self.name)
