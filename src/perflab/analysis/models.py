"""The inference part of ``analyze``: one pass over per-set statistics, everything with an
interval or a corrected p-value, and plain words where the data cannot support a claim."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from perflab.analysis.claims import factor_claims, interaction_claims
from perflab.analysis.fits import (
    INTERCEPT,
    Columns,
    Fit,
    column_names,
    drift_within,
    fit_sets,
    grouped_cv,
    model_matrix,
    nested_f,
    one_blas_thread,
)
from perflab.analysis.noise import levene, noisy_sets, outliers
from perflab.analysis.setstats import SetStats, collapse, covariates
from perflab.analysis.stats import t_ppf, t_sf

MODELS = {
    "linear": (False, False),
    "pairwise": (True, False),
    "linear_log": (False, True),
    "pairwise_log": (True, True),
}


@dataclass
class Inference:
    stats: SetStats
    inv: np.ndarray
    fits: dict[str, Fit]
    cv: dict[str, float]
    eligible: dict[str, str]  # model -> "" or why not
    chosen: str
    effects_fit: Fit
    factors: dict[str, dict[str, Any]]
    interactions: list[dict[str, Any]]
    interactions_note: str | None
    drift: dict[str, Any]
    nested: dict[str, Any]
    cov_notes: list[str]


def eligibility(fit: Fit, s: SetStats) -> str:
    if fit.p > len(s.n):
        return f"{fit.p} parameters > {len(s.n)} distinct sets"
    if fit.df <= 0:
        return "no degrees of freedom left for its uncertainty"
    return ""


def test_plan(a: str, b: str, base: list[str]) -> str:
    x = "{" + ", ".join(base) + "}" if base else "the base set"
    return (
        f"to test {a} x {b} measure X, X+{a}, X+{b}, X+{a}+{b} (X = {x}) three times each (12 runs)"
    )


def infer(
    y: np.ndarray,
    x: np.ndarray,
    names: list[str],
    t: np.ndarray | None = None,
    blocks: np.ndarray | None = None,
    seed: int = 0,
) -> Inference:
    """Fit the candidate models on per-set statistics and derive the corrected claims."""
    cov, notes = covariates(t, blocks)
    s, inv = collapse(y, x, cov)
    with one_blas_thread():
        return _infer(s, inv, y, names, notes, seed)


def _infer(
    s: SetStats, inv: np.ndarray, y: np.ndarray, names: list[str], notes: list[str], seed: int
) -> Inference:
    logs_ok = bool(np.all(y > 0))
    fits: dict[str, Fit] = {}
    cv: dict[str, float] = {}
    eligible: dict[str, str] = {}
    additive = drift_within(s, False)
    drifts = {False: additive, True: drift_within(s, True) if logs_ok else None}
    between, notes = spare_between(s, additive.between, notes)
    cols = {p: Columns(s, names, p, between, seed=seed) for p in (False, True)}
    for name, (pairs, log) in MODELS.items():
        if log and not logs_ok:
            continue
        p = len(column_names(names, pairs))
        d = drifts[log]
        assert d is not None
        if pairs and log and p > len(s.n):
            eligible[name] = f"{p} parameters > {len(s.n)} distinct sets"
            continue
        fits[name] = fit_sets(s, cols[pairs], log, d, hc3=not log)
        eligible[name] = eligibility(fits[name], s)
        cv[name] = grouped_cv(s, cols[pairs], log, d) if not eligible[name] else math.nan
    ok = [n for n in fits if not eligible[n] and math.isfinite(cv[n])]
    chosen = min(ok, key=lambda n: cv[n]) if ok else "linear"
    if fits[chosen].log:  # its intervals are needed now (best set, speed-up)
        fits[chosen] = fit_sets(s, cols[fits[chosen].pairs], True, drifts[True])
    effects_fit = fits["pairwise" if chosen.startswith("pairwise") else "linear"]
    factors = factor_claims(effects_fit, s, names)
    note = None
    inter = interaction_claims(fits["pairwise"], names) if fits["pairwise"].df > 0 else []
    if eligible["pairwise"]:
        p = len(column_names(names, True))
        tested = sum(1 for r in inter if r["p"] is not None and math.isfinite(r["p"]))
        top = sorted(factors, key=lambda f: -abs(np.nan_to_num(factors[f]["effect_us"])))[:2]
        note = (
            f"interactions {'not' if not tested else 'only partly'} assessable "
            f"({int(s.n.sum())} runs, {len(s.n)} distinct sets, {p} parameters; "
            f"{tested} of {len(names) * (len(names) - 1) // 2} pairs testable)"
            + (f"; {test_plan(top[0], top[1], [])}" if len(top) == 2 else "")
        )
    nested = {}
    if "pairwise" in fits:
        s2 = float(s.ss.sum() / s.df_pure) if s.df_pure > 0 else None
        nested = nested_f(fits["linear"], fits["pairwise"], s2, s.df_pure)
    return Inference(
        s,
        inv,
        fits,
        cv,
        eligible,
        chosen,
        effects_fit,
        factors,
        inter,
        note,
        drift_report(fits["linear"], drifts[False], notes, between),
        nested,
        notes,
    )


def spare_between(s: SetStats, between: list[str], notes: list[str]) -> tuple[list[str], list[str]]:
    """The between-set drift terms the sets can carry beside the factors: each must be
    independent of the factor columns (and of the terms before it) and leave a spare set.
    A term the factors' columns already span would alias the factors themselves: on 3 sets
    {}, {b}, {a, b} the campaign's hours made both effects inestimable, or shifted the
    predicted untreated time by the min-norm share of the term (80 for a measured 100).
    Returns the terms kept and ``notes`` with a line for each left out."""
    idx = {n: i for i, n in enumerate(s.cov_names)}
    cur = model_matrix(s.x, False) * np.sqrt(s.n)[:, None]
    rank = int(np.linalg.matrix_rank(cur))
    kept: list[str] = []
    for n in between:
        col = s.g_mean[:, idx[n]] * np.sqrt(s.n)
        col = col / max(float(np.linalg.norm(col)), 1e-300)
        cand = np.hstack([cur, col[:, None]])
        if rank + 1 < len(s.n) and int(np.linalg.matrix_rank(cand)) == rank + 1:
            cur, rank = cand, rank + 1
            kept.append(n)
    left = [f"{n}: not fitted (too few distinct sets to tell it from the factors)"
            for n in between if n not in kept]  # fmt: skip
    return kept, notes + left


def drift_report(
    fit: Fit, within: Any, notes: list[str], between: list[str] | None = None
) -> dict[str, Any]:
    """Each adjustment term with its standard error and 95% interval (``between``: the
    between-set terms fitted; default those ``within`` moved there)."""

    out: dict[str, Any] = {"terms": {}, "notes": list(notes)}
    for i, name in enumerate(within.names):
        se = math.sqrt(within.cov[i, i])
        q = t_ppf(0.975, max(within.df, 1))
        est = float(within.gamma[i])
        out["terms"][name] = {
            "estimate": est,
            "se": se,
            "ci_low": est - q * se,
            "ci_high": est + q * se,
            "p": float(2 * t_sf(abs(est) / se, max(within.df, 1))) if se > 0 else None,
            "how": "within sets (replicates at different times)",
        }
    for name in within.between if between is None else between:
        j = fit.names.index(name)
        c = np.zeros(fit.p)
        c[j] = 1.0
        r = fit.contrast(c)
        out["terms"][name] = {
            "estimate": r["est"],
            "se": r["se"],
            "ci_low": r["lo"],
            "ci_high": r["hi"],
            "p": r["p"],
            "how": "between sets (no replicates spread over time)",
        }
    return out


def coef01(fit: Fit, names: list[str]) -> dict[str, float]:
    """The fit's coefficients in 0/1 coding (as in R's lm), from the ±1 estimates; columns of
    an alias chain take their min-norm share."""
    k = len(names)
    g = dict(zip(fit.names, fit.beta, strict=True))
    out: dict[str, float] = {}
    b0 = g[INTERCEPT] - sum(g[f] for f in names)
    for f in names:
        out[f] = 2 * g[f]
    if fit.pairs:
        for a in range(k):
            for b in range(a + 1, k):
                v = g[f"{names[a]}:{names[b]}"]
                out[f"{names[a]}:{names[b]}"] = 4 * v
                out[names[a]] -= 2 * v
                out[names[b]] -= 2 * v
                b0 += v
    for n in fit.names[len(column_names(names, fit.pairs)) :]:
        out[n] = g[n]
    return {"Intercept": float(b0), **{n: float(v) for n, v in out.items()}}


def noise_report(inf: Inference, y: np.ndarray, key_names: Any) -> dict[str, Any]:
    s = inf.stats
    lv = levene(np.log(y) if np.all(y > 0) else y, inf.inv, s.n)
    noisy = noisy_sets(s)
    cvs = np.sqrt(s.ss / np.maximum(s.n - 1, 1)) / s.mean
    cv_rep = cvs[s.n >= 2]
    return {
        "median_cv": float(np.median(cv_rep)) if len(cv_rep) else None,
        "levene": lv,
        "noisy_sets": [
            {
                "set": key_names(int(s.keys[r["index"]])),
                "n": int(s.n[r["index"]]),
                "std_us": float(math.sqrt(s.ss[r["index"]] / (s.n[r["index"]] - 1))),
                "cv": float(cvs[r["index"]]),
                "p": r["p"],
                "p_adj": r["p_adj"],
            }
            for r in noisy
        ],
        "outliers": [
            {
                "run": o["run"],
                "set": key_names(int(s.keys[o["set_index"]])),
                "value": o["value"],
                "p_bonf": o["p_bonf"],
            }
            for o in outliers(y, inf.inv, s)
        ],
        "test": "per-set variance ratio on log scale vs the other sets (F, Holm); "
        "outliers: externally studentised within-set residuals (Bonferroni)",
    }
