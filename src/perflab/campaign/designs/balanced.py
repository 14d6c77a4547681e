"""``balanced``: z3 finds ``runs`` distinct sets where each factor is on about half the time,
each pair of factors co-occurs about a quarter of the time, and the catalog's conflicts and
requires hold in every set.

Pairs that a constraint fixes (conflicting pairs never co-occur; a required factor is on
whenever its dependant is) are exempt from the pair balance.  When no design exists, z3's
unsat core names the constraints that cannot hold together.
"""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np

from perflab.campaign.designs import DESIGNS
from perflab.campaign.designs.base import Constraints, Design
from perflab.errors import PerflabError
from perflab.options import Opt

MAX_RUNS = 1024


@DESIGNS.register
class Balanced(Design):
    name = "balanced"
    options = {
        # z3 gets one distinctness clause per pair of sets: 10^5 sets filled the memory
        # before the time limit could apply
        "runs": Opt(
            int,
            lo=0,
            hi=MAX_RUNS,
            default=0,
            help="Sets (0: the multiple of 4 above the factor count).",
        ),
        "tolerance": Opt(
            int,
            lo=-1,
            default=-1,
            help="How far each balance may be off (-1: runs / 8, at least 1).",
        ),
        # z3 takes whole milliseconds in an unsigned int: a day is far below its limit
        "timeout_s": Opt(float, above=0, hi=86400, default=60, help="The solver's time limit (s)."),
    }

    def generate(self, cons: Constraints, rng: np.random.Generator) -> list[list[str]]:
        import z3

        fs = cons.factors
        k = len(fs)
        n = int(self.opts["runs"]) or 4 * ((k + 4) // 4)
        if n > 2**k:
            raise PerflabError(
                f"design 'balanced': runs={n} distinct sets, but {k} factors have only {2**k}"
            )
        tol = int(self.opts["tolerance"])
        if tol < 0:
            tol = max(1, n // 8)
        x = [[z3.Bool(f"x_{i}_{j}") for j in range(k)] for i in range(n)]
        solver = z3.Solver()
        solver.set("timeout", int(float(self.opts["timeout_s"]) * 1000))
        solver.set("random_seed", int(rng.integers(0, 2**31)))
        idx = {f: j for j, f in enumerate(fs)}
        tracked: dict[str, Any] = {}

        def track(label: str, expr: Any) -> None:
            flag = z3.Bool(label)
            tracked[label] = flag
            solver.assert_and_track(expr, flag)

        fixed_pairs = set(cons.conflicts) | {tuple(sorted(p)) for p in cons.requires}
        for a, b in sorted(cons.conflicts):
            track(
                f"conflict({a}, {b})",
                z3.And([z3.Not(z3.And(x[i][idx[a]], x[i][idx[b]])) for i in range(n)]),
            )
        for a, b in sorted(cons.requires):
            track(
                f"requires({a} -> {b})",
                z3.And([z3.Implies(x[i][idx[a]], x[i][idx[b]]) for i in range(n)]),
            )
        for j, f in enumerate(fs):
            on = z3.Sum([z3.If(x[i][j], 1, 0) for i in range(n)])
            track(
                f"balance({f}: on in {n // 2 - tol}..{n // 2 + tol} of {n})",
                z3.And(on >= n // 2 - tol, on <= n // 2 + tol),
            )
        for (ja, a), (jb, b) in itertools.combinations(enumerate(fs), 2):
            if tuple(sorted((a, b))) in fixed_pairs:
                continue
            both = z3.Sum([z3.If(z3.And(x[i][ja], x[i][jb]), 1, 0) for i in range(n)])
            track(f"pair({a}, {b})", z3.And(both >= n // 4 - tol, both <= n // 4 + tol))
        for i1, i2 in itertools.combinations(range(n), 2):
            solver.add(z3.Or([x[i1][j] != x[i2][j] for j in range(k)]))
        result = solver.check()
        if result == z3.unsat:
            core = sorted(str(c) for c in solver.unsat_core())
            raise PerflabError(
                f"design 'balanced': no {n} distinct sets satisfy these constraints together: "
                + "; ".join(core)
            )
        if result != z3.sat:
            raise PerflabError(
                f"design 'balanced': z3 gave up ({solver.reason_unknown()}); "
                "try fewer runs or a larger tolerance"
            )
        model = solver.model()
        self.info.update(runs=n, tolerance=tol)
        return [
            sorted(f for j, f in enumerate(fs) if z3.is_true(model.eval(x[i][j]))) for i in range(n)
        ]
