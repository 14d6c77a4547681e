"""Per-set sufficient statistics: the analysis costs grow with distinct treatment sets, not runs.

Runs are collapsed once into, per distinct set: the run count, the mean and within-set sum of
squares of the metric (and of its logarithm), and the within-set moments of the run-level
covariates (drift terms, replicate blocks).  Every fit in :mod:`fits` uses only these,
and the covariate adjustment is exact: the within-set (fixed-effect) estimator of a run-level
covariate needs exactly the centred cross products kept here.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

#: A time-of-day term needs at least this many hours of campaign span (two full days), or it
#: is collinear with the linear trend (the issue's 2-hour campaign: 1404 µs/h, no SE).
DAY_TERMS_MIN_HOURS = 48.0


@dataclass
class SetStats:
    """Distinct treatment sets (rows, sorted by bitmask key) and their sufficient statistics."""

    keys: np.ndarray  # (m,) int64 bitmask, factor j is bit j
    x: np.ndarray  # (m, k) 0/1
    n: np.ndarray  # (m,) runs per set
    mean: np.ndarray  # (m,) mean of y
    ss: np.ndarray  # (m,) within-set sum of squares of y about its mean
    lmean: np.ndarray  # (m,) mean of log y (NaN if some y <= 0)
    lss: np.ndarray  # (m,) within-set sum of squares of log y
    cov_names: list[str] = field(default_factory=list)
    g_mean: np.ndarray = field(default_factory=lambda: np.zeros((0, 0)))  # (m, q) set means
    sgg: np.ndarray = field(default_factory=lambda: np.zeros((0, 0, 0)))  # (m, q, q) centred
    sgy: np.ndarray = field(default_factory=lambda: np.zeros((0, 0)))  # (m, q) centred g·y
    sgly: np.ndarray = field(default_factory=lambda: np.zeros((0, 0)))  # (m, q) centred g·log y
    #: (m,) each set's first run's index: an order of the sets no factor's name or column sets
    first: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))

    @property
    def runs(self) -> int:
        return int(self.n.sum())

    @property
    def df_pure(self) -> int:
        """Pure-error degrees of freedom: replicates beyond the first of each set."""
        return int((self.n - 1).sum())


def keys_of(x: np.ndarray) -> np.ndarray:
    """Each 0/1 row as a bitmask (factor j is bit j); at most 62 factors."""
    if x.shape[1] > 62:
        raise ValueError("at most 62 factors fit a 64-bit set key")
    # column by column: no (runs x k) int64 temporary (240 MB at a million runs), and integer
    # matrix products do not use BLAS (12x slower at a million runs)
    keys = np.zeros(x.shape[0], np.int64)
    for j in range(x.shape[1]):
        keys |= x[:, j].astype(np.int64) << j
    return keys


def covariates(
    t: np.ndarray | None, blocks: np.ndarray | None = None
) -> tuple[dict[str, np.ndarray], list[str]]:
    """Run-level adjustment terms the campaign's span supports, and why others are left out.

    ``hours`` (linear drift from the first run) when runs span any time; ``cos_day``/``sin_day``
    only for spans of at least two days; one indicator per replicate block after the first.
    """
    out: dict[str, np.ndarray] = {}
    notes: list[str] = []
    if t is not None and len(t) and np.ptp(t) > 0:
        hours = (t - t.min()) / 3600.0
        out["hours"] = hours
        span = float(hours.max())
        if span >= DAY_TERMS_MIN_HOURS:
            day = 2 * np.pi * ((t % 86400) / 86400.0)
            out["cos_day"], out["sin_day"] = np.cos(day), np.sin(day)
        else:
            notes.append(
                f"time-of-day terms left out: the campaign spans {span:.1f} h "
                f"(they need {DAY_TERMS_MIN_HOURS:.0f} h to be told apart from a linear drift)"
            )
    elif t is not None:
        notes.append("drift not assessable: all runs have the same timestamp")
    if blocks is not None and len(np.unique(blocks)) > 1:
        for b in np.unique(blocks)[1:]:
            out[f"block_{b}"] = (blocks == b).astype(float)
    return out, notes


def collapse(
    y: np.ndarray, x: np.ndarray, cov: dict[str, np.ndarray] | None = None
) -> tuple[SetStats, np.ndarray]:
    """Per-set statistics of runs (y, 0/1 matrix x, run-level covariates); also each run's set
    index (for run-level diagnostics such as outliers)."""
    keys = keys_of(x)
    uk, first, inv = np.unique(keys, return_index=True, return_inverse=True)
    m = len(uk)
    n = np.bincount(inv, minlength=m).astype(float)

    def centred_moments(v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        mu = np.bincount(inv, weights=v, minlength=m) / n
        d = v - mu[inv]
        return mu, np.bincount(inv, weights=d * d, minlength=m)

    mean, ss = centred_moments(y)
    if np.all(y > 0):
        ly = np.log(y)
        lmean, lss = centred_moments(ly)
    else:
        ly = None
        lmean, lss = np.full(m, np.nan), np.full(m, np.nan)
    names = list(cov or {})
    q = len(names)
    g_mean = np.zeros((m, q))
    sgg = np.zeros((m, q, q))
    sgy = np.zeros((m, q))
    sgly = np.zeros((m, q))
    dg = []
    for a, name in enumerate(names):
        g = np.asarray(cov[name], float)  # type: ignore[index]
        g_mean[:, a] = np.bincount(inv, weights=g, minlength=m) / n
        dg.append(g - g_mean[inv, a])
    dy = y - mean[inv]
    for a in range(q):
        sgy[:, a] = np.bincount(inv, weights=dg[a] * dy, minlength=m)
        if ly is not None:
            sgly[:, a] = np.bincount(inv, weights=dg[a] * (ly - lmean[inv]), minlength=m)
        for b in range(a, q):
            sgg[:, a, b] = sgg[:, b, a] = np.bincount(inv, weights=dg[a] * dg[b], minlength=m)
    stats = SetStats(
        keys=uk,
        first=first,
        x=x[first].astype(np.int8),
        n=n,
        mean=mean,
        ss=ss,
        lmean=lmean,
        lss=lss,
        cov_names=names,
        g_mean=g_mean,
        sgg=sgg,
        sgy=sgy,
        sgly=sgly,
    )
    return stats, inv
