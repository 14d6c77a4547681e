"""``explicit``: a file of treatment sets, one per line (comma-separated; ``#`` comments;
an empty line or ``-`` is the untreated set)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from perflab.campaign.designs import DESIGNS
from perflab.campaign.designs.base import Constraints, Design
from perflab.errors import PerflabError
from perflab.options import Opt


@DESIGNS.register
class Explicit(Design):
    name = "explicit"
    options = {
        "file": Opt(default="", help="A file of sets, one per line (comma-separated; - untreated).")
    }

    def generate(self, cons: Constraints, rng: np.random.Generator) -> list[list[str]]:
        path = Path(str(self.opts["file"]))
        if not self.opts["file"] or not path.is_file():
            raise PerflabError(f"design 'explicit' needs --design-opt file=PATH (got {path})")
        known = set(cons.factors)
        out: list[list[str]] = []
        for n, line in enumerate(path.read_text().splitlines(), 1):
            text = line.split("#", 1)[0].strip()
            if not text and "#" in line:
                continue
            items = sorted({t.strip() for t in text.split(",") if t.strip() and t.strip() != "-"})
            unknown = [t for t in items if t not in known]
            if unknown:
                raise PerflabError(
                    f"{path}:{n}: {', '.join(unknown)} not among the campaign's factors"
                )
            if not cons.ok(set(items)):
                raise PerflabError(f"{path}:{n}: set violates {'; '.join(cons.describe())}")
            out.append(items)
        if not out:
            raise PerflabError(f"{path}: no treatment sets")
        return out
