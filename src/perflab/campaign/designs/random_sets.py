"""``random``: each factor on with probability ``p``, ``runs`` distinct valid sets."""

from __future__ import annotations

import numpy as np

from perflab.campaign.designs import DESIGNS
from perflab.campaign.designs.base import Constraints, Design
from perflab.errors import PerflabError
from perflab.options import Opt


@DESIGNS.register
class RandomSets(Design):
    name = "random"
    options = {
        "runs": Opt(default=0, help="Sets to draw (0: 2 (k + 1))."),
        "p": Opt(float, above=0, hi=1, default=0.5, help="Chance of each factor being on."),
    }

    def generate(self, cons: Constraints, rng: np.random.Generator) -> list[list[str]]:
        k = len(cons.factors)
        runs = int(self.opts["runs"]) or 2 * (k + 1)
        p = float(self.opts["p"])
        seen: set[tuple[str, ...]] = set()
        out: list[list[str]] = []
        for _ in range(runs * 1000):
            chosen = {f for f in cons.factors if rng.random() < p}
            key = tuple(sorted(chosen))
            if key not in seen and cons.ok(chosen):
                seen.add(key)
                out.append(list(key))
                if len(out) == runs:
                    return out
        if not out:
            raise PerflabError(
                f"design 'random': no valid set found ({'; '.join(cons.describe())})"
            )
        return out
