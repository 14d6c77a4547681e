"""Least squares from a Gram matrix: the rank decision (column-pivoted QR), the minimum-norm
solution, and the BLAS settings the analysis runs under."""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import scipy.linalg
from threadpoolctl import ThreadpoolController

RANK_TOL = 1e-10


@dataclass
class Factor:
    """What a Gram matrix alone decides: its rank, the pivoted columns that span the row space,
    the null space and the Cholesky factor of the basic block (shared by every right side)."""

    rank: int
    basic: np.ndarray  # pivoted columns that span the row space
    null: np.ndarray  # (p, p - rank), orthonormal
    chol: np.ndarray  # Cholesky factor of G[basic, basic]


@dataclass
class Solve(Factor):
    """Minimum-norm least squares from a Gram matrix, with its rank and null space."""

    beta: np.ndarray = field(default_factory=lambda: np.zeros(0))


@functools.cache
def _blas() -> ThreadpoolController:
    return ThreadpoolController()  # finding the BLAS libraries costs ~10 ms: once


def one_blas_thread() -> Any:
    """A context with BLAS on one thread: the analysis's matrices (30,000 x 466 at most) gain
    little from a second thread on an idle machine and lose 3-10x to spinning threads on a
    busy one."""
    return _blas().limit(limits=1, user_api="blas")


def solve_gram(g: np.ndarray, r: np.ndarray, fac: Factor | None = None) -> Solve:
    """Rank and null space by a column-pivoted QR of the unit-diagonal Gram matrix; the
    min-norm solution (invariant to column order) by projecting the basic solution.  ``fac``:
    ``factor(g)`` computed before (a Gram matrix shared by several right sides)."""
    with one_blas_thread():
        return _solve(fac if fac is not None else _factor(g), r)


def factor(g: np.ndarray) -> Factor:
    """``solve_gram``'s factorisation of g, to reuse for every right side."""
    with one_blas_thread():
        return _factor(g)


def _factor(g: np.ndarray) -> Factor:
    p = len(g)
    d = np.sqrt(np.clip(np.diag(g), 0, None))
    d[d == 0] = 1.0
    gs = g / d[:, None] / d[None, :]
    q, rr, piv = scipy.linalg.qr(gs, pivoting=True)
    diag = np.abs(np.diag(rr))
    rank = int((diag > RANK_TOL * max(diag[0] if p else 0.0, 1e-300)).sum())
    basic = np.sort(piv[:rank])
    null = q[:, rank:] / d[:, None]  # null(G) = D^-1 null(D^-1 G D^-1)
    if null.shape[1]:
        null, _ = scipy.linalg.qr(null, mode="economic")
    chol = np.linalg.cholesky(g[np.ix_(basic, basic)]) if rank else np.zeros((0, 0))
    return Factor(rank, basic, null, chol)


def _solve(fac: Factor, r: np.ndarray) -> Solve:
    beta = np.zeros(len(r))
    if fac.rank:
        beta[fac.basic] = scipy.linalg.cho_solve((fac.chol, True), r[fac.basic])
        beta -= fac.null @ (fac.null.T @ beta)
    return Solve(fac.rank, fac.basic, fac.null, fac.chol, beta)


def _syrk(a: np.ndarray) -> np.ndarray:
    """a'a with half the flops of a matrix product (BLAS syrk)."""
    if a.shape[0] == 0:
        return np.zeros((a.shape[1], a.shape[1]))
    a = np.asarray(a, dtype=float)
    if a.flags.c_contiguous:
        # a row-major a is a column-major a': syrk of it without a transposed copy
        u = scipy.linalg.blas.dsyrk(1.0, a.T, trans=0)
    else:
        u = scipy.linalg.blas.dsyrk(1.0, np.asfortranarray(a), trans=1)
    return np.triu(u) + np.triu(u, 1).T
