"""``fractional``: two-level fractional factorials at a chosen resolution, and Plackett–Burman.

Regular designs (default): a 2^(k-p) design is k columns in GF(2)^m (N = 2^m runs): m base
factors and k-m generated ones, each the product of some base factors.  It has resolution R
exactly when every set of at most R-1 columns is linearly independent, so no effect of order
< R/2 is aliased with another of order <= R/2 (resolution V: main effects and two-factor
interactions are all clear of each other).  The generator search is greedy with random
restarts, for the smallest m that works.

Some resolutions cannot be reached regularly in few runs: 20 factors at resolution V need
512 regular runs (a [20,12,5] binary code does not exist).  With ``runs = N`` smaller than
that, perflab builds a *non-regular* design of N runs by D-optimal coordinate exchange, in
which every main effect and (for R >= V) two-factor interaction is estimable — none is
aliased with another — though they are correlated (``info["max_abs_corr"]`` says how much).

``plackett_burman = 1``: a Plackett–Burman screening design (resolution III, main effects
only, N a multiple of 4) from pyDOE3.
"""

from __future__ import annotations

import itertools
import math

import numpy as np

from perflab.campaign.designs import DESIGNS
from perflab.campaign.designs.base import Constraints, Design, keep_valid, rows_to_sets
from perflab.errors import PerflabError
from perflab.options import Opt

RESTARTS = 300


def regular_columns(k: int, resolution: int, rng: np.random.Generator) -> tuple[int, list[int]]:
    """(m, k column bitmasks over m base factors) for the smallest m that gives the resolution."""
    if resolution < 3:
        raise PerflabError("resolution must be at least 3")
    m = max(1, math.ceil(math.log2(k + 1)))
    while m <= 16:
        if k <= m:
            return m, [1 << i for i in range(k)]
        for _ in range(RESTARTS):
            cols = _greedy(m, k, resolution, rng)
            if cols is not None:
                return m, cols
        m += 1
    raise PerflabError(f"no regular design for {k} factors at resolution {resolution}")


def _greedy(m: int, k: int, resolution: int, rng: np.random.Generator) -> list[int] | None:
    cols = [1 << i for i in range(m)]
    depth = resolution - 2  # a new column must not equal a sum of <= R-2 chosen columns
    sums: list[set[int]] = [set() for _ in range(depth + 1)]
    sums[0] = {0}
    for j in range(1, depth + 1):
        sums[j] = {_xor(c) for c in itertools.combinations(cols, j)}
    forbidden = set().union(*sums)
    candidates = [v for v in range(1, 1 << m) if bin(v).count("1") >= 2]
    for v in rng.permutation(candidates):
        v = int(v)
        if v in forbidden:
            continue
        for j in range(depth, 0, -1):
            new = {s ^ v for s in sums[j - 1]}
            sums[j] |= new
            forbidden |= new
        cols.append(v)
        if len(cols) == k:
            return cols
    return None


def _xor(values: tuple[int, ...]) -> int:
    out = 0
    for v in values:
        out ^= v
    return out


def regular_matrix(m: int, cols: list[int]) -> np.ndarray:
    """N x k matrix of ±1: column c's sign in run r is the parity of (r & c)."""
    runs = np.arange(1 << m)
    return (
        np.array([[1 if bin(int(r) & c).count("1") % 2 == 0 else -1 for c in cols] for r in runs])
        * -1
    )


def model_matrix(x: np.ndarray, interactions: bool) -> np.ndarray:
    """Intercept, main effects and (optionally) all two-factor interaction columns."""
    cols = [np.ones(len(x)), *x.T]
    if interactions:
        cols += [x[:, i] * x[:, j] for i, j in itertools.combinations(range(x.shape[1]), 2)]
    return np.column_stack(cols).astype(float)


def doptimal(
    k: int, runs: int, interactions: bool, rng: np.random.Generator, passes: int = 8
) -> np.ndarray:
    """Non-regular ±1 design by coordinate exchange on det(F'F) (Meyer & Nachtsheim)."""
    p = 1 + k + (k * (k - 1) // 2 if interactions else 0)
    if runs < p:
        raise PerflabError(f"{runs} runs cannot estimate {p} effects; give at least runs={p}")
    for _ in range(20):
        x = rng.choice([-1.0, 1.0], size=(runs, k))
        f = model_matrix(x, interactions)
        if np.linalg.matrix_rank(f) == p:
            break
    else:
        raise PerflabError(f"no estimable design of {runs} runs found")
    minv = np.linalg.inv(f.T @ f)
    for _ in range(passes):
        improved = False
        for i in range(runs):
            old = f[i].copy()
            flips = np.repeat(x[i][None, :], k, axis=0)
            flips[np.arange(k), np.arange(k)] *= -1
            g = model_matrix(flips, interactions)
            mo = minv @ old
            mg = g @ minv
            d_old = old @ mo
            d_g = np.einsum("ij,ij->i", mg, g)
            d_og = mg @ old
            ratio = (1 + d_g) * (1 - d_old) + d_og**2
            j = int(np.argmax(ratio))
            if ratio[j] > 1 + 1e-9:
                x[i] = flips[j]
                new = g[j]
                # Sherman–Morrison: remove the old row, add the new one.
                minv = minv + np.outer(mo, mo) / (1 - d_old)
                mn = minv @ new
                minv = minv - np.outer(mn, mn) / (1 + new @ mn)
                f[i] = new
                improved = True
        if not improved:
            break
    return x


@DESIGNS.register
class Fractional(Design):
    name = "fractional"
    options = {
        # above V the greedy search runs for minutes before it says no (issue 43: 99 was
        # taken silently, as a full factorial for few factors)
        "resolution": Opt(int, lo=3, hi=5, default=4, help="Resolution of the fraction."),
        "runs": Opt(default=0, help="Sets (0: the smallest fraction of that resolution)."),
        "plackett_burman": Opt(
            choices=(0, 1), default=0, help="1: a Plackett-Burman screening design instead."
        ),
    }

    def generate(self, cons: Constraints, rng: np.random.Generator) -> list[list[str]]:
        k = len(cons.factors)
        res = int(self.opts["resolution"])
        if int(self.opts["plackett_burman"]):
            from pyDOE3 import pbdesign

            x = np.asarray(pbdesign(k))
            self.info.update(kind="plackett-burman", resolution=3, runs=len(x))
        else:
            m, cols = regular_columns(k, res, rng)
            runs = int(self.opts["runs"])
            if runs and runs < (1 << m):
                x = doptimal(k, runs, interactions=res >= 5, rng=rng)
                corr = np.corrcoef(model_matrix(x, res >= 5)[:, 1:].T)
                np.fill_diagonal(corr, 0)
                self.info.update(
                    kind="non-regular",
                    resolution=res,
                    runs=runs,
                    max_abs_corr=float(np.abs(corr).max()),
                )
            else:
                x = regular_matrix(m, cols)
                self.info.update(
                    kind="regular",
                    resolution=res,
                    runs=1 << m,
                    generators=[bin(c) for c in cols[m:]],
                )
        return keep_valid(rows_to_sets(x, cons.factors), cons, self.name)
