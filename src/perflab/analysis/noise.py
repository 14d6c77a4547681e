"""Noise: unequal spread between sets and outlying runs, each with a multiplicity correction.

Spread is compared on the log scale (run-to-run noise in µs/task is roughly proportional to
the time itself, so a slow set is not "noisy" for being slow).  Per set, the ratio of its
variance to the pooled variance of the other sets is F-distributed under equal spread
(two-sided p, Holm over sets); overall, Levene's test (absolute deviations from the set mean,
one-way ANOVA).  Outliers: externally studentised residuals of the cell-means model (each
run against its own set's other runs) with a Bonferroni bound, as statsmodels'
``outlier_test(method="bonf")`` computes for the same model.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from perflab.analysis.setstats import SetStats
from perflab.analysis.stats import adjust, bonferroni, bonferroni_level, f_sf, t_ppf, t_sf

ALPHA = 0.05


def levene(v: np.ndarray, inv: np.ndarray, s_n: np.ndarray) -> dict[str, Any] | None:
    """Levene's test (mean-centred) over sets with at least two runs, vectorised."""
    m = len(s_n)
    keep = s_n[inv] >= 2
    groups = int((s_n >= 2).sum())
    if groups < 2:
        return None
    v, g = v[keep], inv[keep]
    mu = np.bincount(g, weights=v, minlength=m)[g] / s_n[g]
    z = np.abs(v - mu)
    zs = np.bincount(g, weights=z, minlength=m)
    zbar_g = np.divide(zs, s_n, out=np.zeros(m), where=s_n > 0)
    zbar = z.mean()
    n = len(z)
    between = float((s_n[s_n >= 2] * (zbar_g[s_n >= 2] - zbar) ** 2).sum())
    within = float(((z - zbar_g[g]) ** 2).sum())
    df1, df2 = groups - 1, n - groups
    if df2 <= 0 or within <= 0:
        return None
    w = between / df1 / (within / df2)
    return {"W": w, "df": [df1, df2], "p": float(f_sf(w, df1, df2))}


def noisy_sets(s: SetStats) -> list[dict[str, Any]]:
    """Sets whose log-scale spread differs from the rest (Holm over the sets tested)."""
    rep = np.flatnonzero(s.n >= 3)
    if len(rep) < 3 or not np.isfinite(s.lss).all():
        return []
    df = s.n - 1
    tot_ss, tot_df = float(s.lss[s.n >= 2].sum()), float(df[s.n >= 2].sum())
    rest_df = tot_df - df[rep]
    testable = rest_df > 0
    # one vectorised F tail for every set (a scipy call per set cost seconds at 30,000 sets)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = (s.lss[rep] / df[rep]) / ((tot_ss - s.lss[rep]) / rest_df)
    one = f_sf(ratio[testable], df[rep][testable], rest_df[testable])
    two = np.full(len(rep), np.nan)
    two[testable] = np.fmin(1.0, 2 * np.minimum(one, 1 - one))  # fmin: a 0/0 ratio gives p = 1
    p = [float(v) for v in two]
    adj, sig = adjust(p, "holm", ALPHA)
    return [
        {"index": int(i), "p": pi, "p_adj": ai}
        for i, pi, ai, si in zip(rep, p, adj, sig, strict=True)
        if si
    ]


def outliers(y: np.ndarray, inv: np.ndarray, s: SetStats) -> list[dict[str, Any]]:
    """Runs far from their set's other runs (externally studentised, Bonferroni)."""
    n_runs, m = len(y), len(s.n)
    df = n_runs - m - 1
    if df <= 0:
        return []
    e = y - s.mean[inv]
    h = 1.0 / s.n[inv]
    sse = float(s.ss.sum())
    ok = h < 1
    r = np.zeros(n_runs)
    s2 = (sse - np.where(ok, e**2 / np.where(ok, 1 - h, 1), 0)) / df
    r[ok] = e[ok] / np.sqrt(np.maximum(s2[ok], 1e-300) * (1 - h[ok]))
    # only |r| beyond the Bonferroni critical value can be hits: the tail for those alone
    # (a million tails cost 0.4 s); 10% below it, far beyond any rounding, to be safe
    crit = 0.9 * -float(t_ppf(bonferroni_level(ALPHA, n_runs) / 2, df))
    cand = np.flatnonzero(ok & (np.abs(r) > crit)) if np.isfinite(crit) else np.arange(n_runs)
    p = bonferroni(2 * t_sf(np.abs(r[cand]), df), n_runs)  # the family: every run
    hit = (p < ALPHA) & ok[cand]
    return [
        {"run": int(i), "set_index": int(inv[i]), "value": float(y[i]), "p_bonf": float(pi)}
        for i, pi in list(zip(cand[hit], p[hit], strict=True))[:50]
    ]
