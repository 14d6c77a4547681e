"""``random``: each factor on with probability ``p``, ``runs`` distinct valid sets."""

from __future__ import annotations

import numpy as np

from perflab.campaign.designs import DESIGNS
from perflab.campaign.designs.base import Constraints, Design
from perflab.errors import PerflabError
from perflab.options import Opt

STALL = 20_000


@DESIGNS.register
class RandomSets(Design):
    name = "random"
    options = {
        # a campaign of more sets than this is not measured in a lifetime; past it, a typo
        # (runs=1000000000) would fill the memory with the plan
        "runs": Opt(int, lo=0, hi=100_000, default=0, help="Sets to draw (0: 2 (k + 1))."),
        "p": Opt(float, above=0, hi=1, default=0.5, help="Chance of each factor being on."),
    }

    def generate(self, cons: Constraints, rng: np.random.Generator) -> list[list[str]]:
        k = len(cons.factors)
        runs = int(self.opts["runs"]) or min(2 * (k + 1), 2**k)
        if runs > 2**k:
            raise PerflabError(
                f"design 'random': runs={runs} distinct sets, but {k} factors have only {2**k}"
            )
        p = float(self.opts["p"])
        seen: set[tuple[str, ...]] = set()
        out: list[list[str]] = []
        misses = 0
        for _ in range(runs * 1000):
            # a tiny p (or tight constraints) yields the same few sets over and over: stop
            # after a long run of nothing new rather than draw runs x 1000 times
            misses += 1
            if misses > STALL:
                break
            chosen = {f for f in cons.factors if rng.random() < p}
            key = tuple(sorted(chosen))
            if key not in seen and cons.ok(chosen):
                seen.add(key)
                misses = 0
                out.append(list(key))
                if len(out) == runs:
                    return out
        if not out:
            raise PerflabError(
                f"design 'random': no valid set found ({'; '.join(cons.describe())})"
            )
        return out
