"""Claims from set-level fits: corrected tests, alias chains, the best set, noise.

Every claim carries ``p`` (raw), ``p_adj`` (Holm over factors, Benjamini–Hochberg over
interactions) and ``significant`` (after adjustment); an aliased or untestable effect has
``p = None`` and is never significant.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from perflab.analysis.exact import EXACT_CLAIM
from perflab.analysis.fits import Fit, model_matrix
from perflab.analysis.setstats import SetStats
from perflab.analysis.stats import adjust

FACTOR_ALPHA = 0.05  # Holm, family-wise
INTERACTION_FDR = 0.10  # Benjamini–Hochberg
MAX_EXACT = 20


def ame_vector(fit: Fit, s: SetStats, j: int) -> np.ndarray:
    """Average marginal effect of factor j over the data's runs, in ±1 coding:
    T(z_j=+1) - T(z_j=-1) = 2 b_j + 2 sum_g b_jg zbar_g."""
    k = s.x.shape[1]
    c = np.zeros(fit.p)
    c[1 + j] = 2.0
    if fit.pairs:
        zbar = (s.n @ (2.0 * s.x - 1.0)) / s.n.sum()
        a, b = np.triu_indices(k, 1)
        c[1 + k : 1 + k + len(a)] = np.where(a == j, 2 * zbar[b], 0) + np.where(
            b == j, 2 * zbar[a], 0
        )
    return c


def factor_claims(fit: Fit, s: SetStats, factors: list[str]) -> dict[str, dict[str, Any]]:
    """Each factor's average marginal effect with a t interval, Holm-adjusted."""
    out: dict[str, dict[str, Any]] = {}
    cs = [ame_vector(fit, s, j) for j in range(len(factors))]
    for j, (f, c, r) in enumerate(zip(factors, cs, fit.contrasts(cs), strict=True)):
        out[f] = {
            "effect_us": r["est"],
            "ci_low": r["lo"],
            "ci_high": r["hi"],
            "se_us": r["se"],
            "p": r["p"],
            "estimable": fit.estimable(c),
            "aliases": [] if fit.estimable(c) else fit.aliases(1 + j),
        }
    adj, sig = adjust([v["p"] for v in out.values()], "holm", FACTOR_ALPHA)
    for v, pa, sg in zip(out.values(), adj, sig, strict=True):
        v["p_adj"], v["significant"] = pa, sg
        v["claim"] = "significant after correction" if sg else "exploratory"
        if fit.exact and v["estimable"]:
            v["claim"] = EXACT_CLAIM
    return out


def interaction_claims(fit: Fit, factors: list[str]) -> list[dict[str, Any]]:
    """Every pair's interaction contrast T(X+a+b) - T(X+a) - T(X+b) + T(X) = 4 b_ab (±1
    coding), BH-adjusted over the estimable pairs; aliased pairs carry their chain."""
    k = len(factors)
    rows: list[dict[str, Any]] = []
    a_idx, b_idx = np.triu_indices(k, 1)
    cs = []
    for i in range(len(a_idx)):
        c = np.zeros(fit.p)
        c[1 + k + i] = 4.0
        cs.append(c)
    results = fit.contrasts(cs)
    for i, (a, b) in enumerate(zip(a_idx, b_idx, strict=True)):
        col = 1 + k + i
        r: dict[str, Any] = dict(results[i])
        aliases = fit.aliases(col)
        rows.append(
            {
                "a": factors[a],
                "b": factors[b],
                "effect_us": r["est"],
                "ci_low": r["lo"],
                "ci_high": r["hi"],
                "se_us": r["se"],
                "p": r["p"],
                "aliases": [n.replace(":", " x ") for n in aliases],
            }
        )
    adj, sig = adjust([r["p"] for r in rows], "fdr_bh", INTERACTION_FDR)
    for r, pa, sg in zip(rows, adj, sig, strict=True):
        r["p_adj"], r["significant"] = pa, sg and not r["aliases"]
        r["claim"] = (
            "aliased"
            if r["aliases"]
            else EXACT_CLAIM
            if fit.exact
            else ("significant after correction" if r["significant"] else "exploratory")
        )
    rows.sort(key=lambda r: (-np.nan_to_num(abs(r["effect_us"]), nan=-1.0), r["a"], r["b"]))
    return rows


def rows_of(keys: np.ndarray, k: int) -> np.ndarray:
    return ((keys[:, None] >> np.arange(k)) & 1).astype(np.int8)


def allowed(x: np.ndarray, bad: np.ndarray, requires: list[tuple[int, int]]) -> np.ndarray:
    """Rows honouring the forbidden pairs (conflicts, never seen together) and requires."""
    xf = x.astype(float)
    ok = ((xf @ bad) * xf).sum(axis=1) == 0
    for a, b in requires:
        ok &= ~((x[:, a] == 1) & (x[:, b] == 0))
    return ok


class Predictor:
    """Predictions of any set from a fit, with estimability (no guessing aliased sets)."""

    def __init__(self, fit: Fit, k: int) -> None:
        self.fit, self.k = fit, k

    def rows(self, keys: np.ndarray) -> np.ndarray:
        f = model_matrix(rows_of(keys, self.k), self.fit.pairs)
        extra = self.fit.p - f.shape[1]  # between-set drift columns: at their mean (0 shift)
        return np.hstack([f, np.zeros((len(f), extra))]) if extra else f

    def linear(self, keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        f = self.rows(keys)
        lin = f @ self.fit.beta
        if self.fit.null.shape[1]:
            off = np.linalg.norm(f @ self.fit.null, axis=1)
            est = off <= 1e-7 * np.linalg.norm(f, axis=1)
        else:
            est = np.ones(len(f), bool)
        return lin, est

    def ranking(self, keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``linear`` for ranking many sets: with a full-rank fit, the prediction as
        b0 + z'b + z'Bz/2 (B: the pair coefficients) without the (sets x p) model matrix;
        equal to ``linear`` up to rounding."""
        fit = self.fit
        if fit.null.shape[1]:
            return self.linear(keys)
        k = self.k
        z = 2.0 * rows_of(keys, k) - 1.0
        lin = fit.beta[0] + z @ fit.beta[1 : k + 1]
        if fit.pairs and k > 1:
            pair = np.zeros((k, k))
            a, b = np.triu_indices(k, 1)
            pair[a, b] = fit.beta[k + 1 : k + 1 + len(a)]
            lin = lin + np.einsum("ij,ij->i", z @ pair, z)
        return lin, np.ones(len(keys), bool)

    def us(self, lin: np.ndarray) -> np.ndarray:
        return np.exp(lin) * self.fit.smear if self.fit.log else lin


def search(pred: Predictor, bad: np.ndarray, requires: list[tuple[int, int]]) -> tuple[int, str]:
    """The fastest allowed, estimable set: exhaustive up to MAX_EXACT factors, else local search
    by single flips from starts chosen by the fit (deterministic: no random starts)."""
    k = pred.k
    if k <= MAX_EXACT:
        best_key, best = 0, math.inf
        for lo in range(0, 1 << k, 1 << 14):
            keys = np.arange(lo, min(lo + (1 << 14), 1 << k), dtype=np.int64)
            lin, est = pred.ranking(keys)
            v = np.where(est & allowed(rows_of(keys, k), bad, requires), lin, np.inf)
            i = int(np.argmin(v))
            if v[i] < best:
                best_key, best = int(keys[i]), float(v[i])
        return best_key, "exhaustive over estimable allowed sets"
    # Starts that no factor's name or position chooses: the first r factors by how much each
    # alone saves from the empty set (r = 0 .. k), so renaming a factor changes nothing.
    singles = np.array([0] + [1 << j for j in range(k)], dtype=np.int64)
    lin0, _ = pred.ranking(singles)
    order = np.lexsort((np.arange(k), np.round(lin0[1:] - lin0[0], 9)))
    best_key, best = 0, math.inf
    for r in range(k + 1):
        key = int(sum(1 << int(j) for j in order[:r]))
        cur = math.inf
        while True:
            flips = np.array([key] + [key ^ (1 << j) for j in range(k)], dtype=np.int64)
            lin, est = pred.ranking(flips)
            v = np.where(est & allowed(rows_of(flips, k), bad, requires), lin, np.inf)
            i = int(np.argmin(v))
            if v[i] >= cur - 1e-12:
                break
            key, cur = int(flips[i]), float(v[i])
        if cur < best - 1e-12:
            best_key, best = key, cur
    return best_key, f"local search ({k + 1} starts) over estimable allowed sets"
