"""``sequences``: random orderings applied cumulatively, from the empty set to a full set.

Each sequence gives k+1 nested sets, so exact X -> X+{t} pairs exist for every factor and a
whole path can be read off (exact-pair deltas, PCA path vectors).  Conflicts are resolved per
sequence by leaving out one factor of each conflicting pair at random; requires are honoured
by ordering.  The orders are kept in the campaign (``info["sequences"]``).
"""

from __future__ import annotations

import numpy as np

from perflab.campaign.designs import DESIGNS
from perflab.campaign.designs.base import Constraints, Design
from perflab.errors import PerflabError
from perflab.options import Opt


@DESIGNS.register
class Sequences(Design):
    name = "sequences"
    options = {
        # each order is drawn one by one (up to 1,000 tries each): 10^8 ran for hours
        "sequences": Opt(
            int, lo=1, hi=10_000, default=4, help="Random orders of adding the factors."
        ),
    }

    def generate(self, cons: Constraints, rng: np.random.Generator) -> list[list[str]]:
        n = int(self.opts["sequences"])
        orders: list[list[str]] = []
        for _ in range(n):
            orders.append(self._one(cons, rng))
        sets: dict[tuple[str, ...], None] = {}
        for order in orders:
            for i in range(len(order) + 1):
                sets[tuple(sorted(order[:i]))] = None
        self.info["sequences"] = orders
        return [list(s) for s in sets]

    def _one(self, cons: Constraints, rng: np.random.Generator) -> list[str]:
        for _ in range(1000):
            members = set(cons.factors)
            for a, b in sorted(cons.conflicts):
                if a in members and b in members:
                    members.discard(a if rng.random() < 0.5 else b)
            # drop factors whose requirement was dropped
            changed = True
            while changed:
                changed = False
                for a, b in cons.requires:
                    if a in members and b not in members:
                        members.discard(a)
                        changed = True
            order: list[str] = []
            remaining = [members_list for members_list in rng.permutation(sorted(members))]
            while remaining:
                for f in remaining:
                    if all(b in order for a, b in cons.requires if a == f):
                        order.append(str(f))
                        remaining.remove(f)
                        break
                else:
                    break
            if not remaining and all(cons.ok(set(order[:i])) for i in range(len(order) + 1)):
                return order
        raise PerflabError(f"design 'sequences': no valid ordering ({'; '.join(cons.describe())})")
