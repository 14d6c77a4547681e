"""``analyze``: everything the seed asked of a dataset, as one JSON-able dict (DESIGN.md §4)."""

from __future__ import annotations

import math
from itertools import combinations
from typing import Any

import numpy as np
import pandas as pd

from perflab.analysis.data import Dataset
from perflab.analysis.deltas import deltas, set_means
from perflab.analysis.models import Fit, cv_rmse, ols, time_covariates
from perflab.errors import PerflabError

#: The seed's "nice" order; factors without a catalog category get one from their prefix.
CATEGORY_ORDER = ("environment", "safe_config", "source_keep", "config_disable", "source_remove")
MAX_EXACT = 20
CV_ROWS = 200_000


def category(ds: Dataset, f: str) -> str:
    if f in ds.categories:
        return ds.categories[f]
    if f.startswith("src_"):
        return "source_keep"
    if f.startswith(("cfg_", "app_")):
        return "safe_config"
    return "environment"


def restrict(ds: Dataset, without: list[str]) -> Dataset:
    """Only the runs that have none of ``without`` (the seed's "keep logs" view)."""
    unknown = [f for f in without if f not in ds.factors]
    if unknown:
        raise PerflabError(f"--without: {', '.join(unknown)} not among the factors")
    idx = [ds.factors.index(f) for f in without]
    rows = ~ds.x[:, idx].astype(bool).any(axis=1) if idx else np.ones(len(ds.y), bool)
    sub = ds.subset(np.asarray(rows, dtype=bool))
    if len(sub.y) == 0:
        raise PerflabError(f"no run is without {', '.join(without)}")
    varied = [j for j in range(sub.x.shape[1]) if 0 < sub.x[:, j].sum() < len(sub.y)]
    sub.x = sub.x[:, varied]
    sub.factors = [sub.factors[j] for j in varied]
    return sub


class Values:
    """T(S): the measured mean where set S was measured, else the pairwise model's prediction."""

    def __init__(self, ds: Dataset, means: pd.DataFrame, fit: Fit) -> None:
        self.ds, self.fit = ds, fit
        self.measured = dict(zip(means.index.to_numpy(dtype=np.int64), means["mean"], strict=True))
        k = len(ds.factors)
        self.b0 = 0.0
        self.bm = np.zeros(k)
        self.bp = np.zeros((k, k))
        idx = {f: j for j, f in enumerate(ds.factors)}
        for name, b in fit.coef().items():
            if name == "Intercept":
                self.b0 = b
            elif ":" in name:
                a, c = name.split(":", 1)
                self.bp[idx[a], idx[c]] = b
            else:
                self.bm[idx[name]] = b

    def predict_keys(self, keys: np.ndarray) -> np.ndarray:
        k = len(self.ds.factors)
        x = ((keys[:, None] >> np.arange(k)) & 1).astype(float)
        return self.b0 + x @ self.bm + ((x @ self.bp) * x).sum(axis=1)

    def __call__(self, key: int) -> tuple[float, bool]:
        if key in self.measured:
            return float(self.measured[key]), True
        return float(self.predict_keys(np.array([key], dtype=np.int64))[0]), False


def forbidden_pairs(ds: Dataset) -> np.ndarray:
    """Pairs the best-set search must not combine: catalog conflicts, and pairs never seen
    together (the model cannot say what they do together)."""
    k = len(ds.factors)
    bad = np.zeros((k, k), bool)
    x = ds.x.astype(np.int64)
    together = x.T @ x
    for a, b in combinations(range(k), 2):
        if together[a, b] == 0 or tuple(sorted((ds.factors[a], ds.factors[b]))) in ds.conflicts:
            bad[a, b] = True
    return bad


def best_set(ds: Dataset, values: Values, bad: np.ndarray, seed: int = 0) -> tuple[int, float, str]:
    k = len(ds.factors)
    if k <= MAX_EXACT:
        best_key, best = 0, math.inf
        for lo in range(0, 1 << k, 1 << 16):
            keys = np.arange(lo, min(lo + (1 << 16), 1 << k), dtype=np.int64)
            x = ((keys[:, None] >> np.arange(k)) & 1).astype(float)
            pred = values.predict_keys(keys)
            pred[((x @ bad) * x).sum(axis=1) > 0] = np.inf
            i = int(np.argmin(pred))
            if pred[i] < best:
                best_key, best = int(keys[i]), float(pred[i])
        return best_key, best, "exhaustive"
    # Many factors: hill climbing by single flips from random starts.
    rng = np.random.default_rng(seed)
    best_key, best = 0, values.predict_keys(np.array([0]))[0]

    def ok(key: int) -> bool:
        x = np.array([(key >> j) & 1 for j in range(k)], float)
        return not ((x @ bad) * x).sum() > 0

    for _ in range(64):
        key = 0
        for j in rng.permutation(k):
            if rng.random() < 0.5 and ok(key | 1 << int(j)):
                key |= 1 << int(j)
        cur = values.predict_keys(np.array([key]))[0]
        while True:
            flips = np.array([key ^ (1 << j) for j in range(k)], dtype=np.int64)
            pred = values.predict_keys(flips)
            for i, fk in enumerate(flips):
                if not ok(int(fk)):
                    pred[i] = np.inf
            i = int(np.argmin(pred))
            if pred[i] >= cur - 1e-12:
                break
            key, cur = int(flips[i]), float(pred[i])
        if cur < best:
            best_key, best = key, float(cur)
    return best_key, float(best), "local search (64 starts)"


def model_row(fit: Fit, ds: Dataset, key: int) -> np.ndarray:
    """The pairwise model's row for the treatment set ``key``."""
    on = set(ds.names_of(key))
    out = np.zeros(len(fit.names))
    for i, name in enumerate(fit.names):
        parts = name.split(":")
        out[i] = 1.0 if name == "Intercept" else float(all(p in on for p in parts))
    return out


def prune(fit: Fit, ds: Dataset, key: int) -> int:
    """Drop, one at a time, the factor whose contribution to set ``key`` is least clearly a
    saving, until every remaining factor's 95% CI of T(key) - T(key - f) is below zero: a
    best set should not chase noise."""
    while True:
        worst, worst_hi = None, 0.0
        for j in range(len(ds.factors)):
            if key >> j & 1:
                _, _, hi = fit.ci(model_row(fit, ds, key) - model_row(fit, ds, key ^ 1 << j))
                if hi >= worst_hi:
                    worst, worst_hi = j, hi
        if worst is None:
            return key
        key ^= 1 << worst


def shapley(values: Values, base: int, members: list[int]) -> tuple[dict[int, float], int, int]:
    """Exact Shapley values of each member bit for v(base + S), S over subsets of members."""
    d = len(members)
    if d > MAX_EXACT:
        raise PerflabError(
            f"exact Shapley over {d} factors is 2^{d} sets; give at most {MAX_EXACT}"
        )
    subsets = np.arange(1 << d, dtype=np.int64)
    keys = np.full(len(subsets), base, dtype=np.int64)
    for i, bit in enumerate(members):
        keys |= ((subsets >> i) & 1) << bit
    v = values.predict_keys(keys)
    measured = 0
    for n, key in enumerate(keys):
        if int(key) in values.measured:
            v[n] = values.measured[int(key)]
            measured += 1
    size = np.array([bin(int(s)).count("1") for s in subsets])
    fact = [math.factorial(n) for n in range(d + 1)]
    out: dict[int, float] = {}
    for i, bit in enumerate(members):
        without = subsets[(subsets >> i) & 1 == 0]
        w = np.array([fact[s] * fact[d - s - 1] for s in size[without]], float) / fact[d]
        out[bit] = float((w * (v[without | (1 << i)] - v[without])).sum())
    return out, measured, len(subsets)


def path(
    values: Values, ds: Dataset, start: int, goal: list[int], order: str | list[int]
) -> list[dict[str, Any]]:
    """Steps from ``start`` adding each of ``goal``: greedily (best next), by category
    ("nice"), or in a given order. Each step with µs/task and tasks/s."""
    cur = start
    t, measured = values(cur)
    steps: list[dict[str, Any]] = [
        {
            "factor": None,
            "set": ds.names_of(cur),
            "us_per_task": t,
            "tasks_per_s": 1e6 / t,
            "measured": measured,
        }
    ]
    remaining = list(goal)
    while remaining:
        if isinstance(order, list):
            pick = order[len(steps) - 1]
        else:
            pool = remaining
            if order == "nice":
                rank = min(CATEGORY_ORDER.index(category(ds, ds.factors[j])) for j in remaining)
                pool = [
                    j
                    for j in remaining
                    if CATEGORY_ORDER.index(category(ds, ds.factors[j])) == rank
                ]
            pick = min(pool, key=lambda j: values(cur | 1 << j)[0])
        remaining.remove(pick)
        prev = t
        cur |= 1 << pick
        t, measured = values(cur)
        steps.append(
            {
                "factor": ds.factors[pick],
                "category": category(ds, ds.factors[pick]),
                "set": ds.names_of(cur),
                "us_per_task": t,
                "tasks_per_s": 1e6 / t,
                "delta_us": t - prev,
                "measured": measured,
            }
        )
    return steps


def weighted_mean_ci(
    delta: np.ndarray, weight: np.ndarray, rng: np.random.Generator, n_boot: int = 1000
) -> tuple[float, float, float]:
    """Weighted mean of the set-pair deltas and a percentile bootstrap CI over set pairs."""
    mean = float(np.average(delta, weights=weight))
    if len(delta) < 2:
        return mean, math.nan, math.nan
    boots = np.empty(n_boot)
    for b in range(n_boot):
        i = rng.integers(0, len(delta), len(delta))
        boots[b] = np.average(delta[i], weights=weight[i])
    lo, hi = np.percentile(boots, [2.5, 97.5])
    return mean, float(lo), float(hi)


def pca_of_paths(ds: Dataset, values: Values) -> dict[str, Any] | None:
    """One vector per measured sequence: each factor's delta along it (0 if not on it)."""
    idx = {f: j for j, f in enumerate(ds.factors)}
    vectors = []
    for order in ds.sequences:
        vec = np.zeros(len(ds.factors))
        cur, ok = 0, True
        if 0 not in values.measured:
            break
        for f in order:
            if f not in idx:
                continue
            nxt = cur | 1 << idx[f]
            if nxt not in values.measured or cur not in values.measured:
                ok = False
                break
            vec[idx[f]] = values.measured[nxt] - values.measured[cur]
            cur = nxt
        if ok:
            vectors.append(vec)
    if len(vectors) < 3:
        return None
    from sklearn.decomposition import PCA

    m = np.array(vectors)
    pca = PCA(n_components=min(m.shape))
    scores = pca.fit_transform(m)
    return {
        "n_vectors": len(vectors),
        "explained_variance_ratio": [float(v) for v in pca.explained_variance_ratio_],
        "loadings": {
            f: [float(c[j]) for c in pca.components_[:2]] for j, f in enumerate(ds.factors)
        },
        "scores": [[float(s) for s in row[:2]] for row in scores],
    }


def analyze(
    ds: Dataset,
    without: list[str] | None = None,
    from_set: list[str] | None = None,
    to_set: list[str] | None = None,
    order: list[str] | None = None,
    seed: int = 0,
    n_boot: int = 1000,
) -> dict[str, Any]:
    """Analyse a dataset; see DESIGN.md §4 for the keys. ``without`` restricts to runs
    without those factors; ``from_set``/``to_set`` set the Shapley attribution (default:
    empty set -> predicted best set); ``order`` adds a user-ordered path."""
    if without:
        ds = restrict(ds, without)
    rng = np.random.default_rng(seed)
    means = set_means(ds)
    d = deltas(ds, means)
    pairwise = ols(ds, interactions=True)
    tcov = time_covariates(ds)
    linear = ols(ds, interactions=False, extra=tcov)
    fits = {
        "linear": linear,
        "linear_log": ols(ds, interactions=False, log=True, extra=tcov),
        "pairwise": pairwise,
        "pairwise_log": ols(ds, interactions=True, log=True),
    }
    cv_ds = ds if len(ds.y) <= CV_ROWS else ds.subset(rng.permutation(len(ds.y))[:CV_ROWS])
    for name, fit in fits.items():
        fit.cv_rmse = cv_rmse(cv_ds, interactions=name.startswith("pairwise"), log=fit.log)
    # Predictions (AMEs, best set, paths, Shapley where unmeasured) come from the model that
    # cross-validates better: with few runs the pairwise model over-fits. A saturated fit (no
    # residual df) has no uncertainty to offer, so it is not eligible however it validates.
    use_pairwise = pairwise.df_resid > 0 and (pairwise.cv_rmse or math.inf) <= (
        linear.cv_rmse or math.inf
    )
    model = pairwise if use_pairwise else ols(ds, interactions=False)
    values = Values(ds, means, model)
    xbar = ds.x.mean(axis=0)

    factors: dict[str, Any] = {}
    for f in ds.factors:
        c = np.zeros(len(model.names))
        for i, name in enumerate(model.names):
            if name == f:
                c[i] = 1
            elif ":" in name and f in name.split(":"):
                other = [g for g in name.split(":") if g != f][0]
                c[i] = xbar[ds.factors.index(other)]
        est, lo, hi = model.ci(c)
        part = d[d["factor"] == f]
        entry: dict[str, Any] = {
            "effect_us": est,
            "ci_low": lo,
            "ci_high": hi,
            "mean_delta_us": None,
            "mean_delta_ci": None,
            "n_pairs": int(part["weight"].sum()),
            "category": category(ds, f),
        }
        if len(part):
            m, mlo, mhi = weighted_mean_ci(
                part["delta"].to_numpy(), part["weight"].to_numpy(), rng, n_boot
            )
            entry["mean_delta_us"] = m
            entry["mean_delta_ci"] = None if math.isnan(mlo) else [mlo, mhi]
        factors[f] = entry

    interactions: list[dict[str, Any]] = []
    for i, name in enumerate(pairwise.names):
        if ":" in name:
            a, b = name.split(":", 1)
            c = np.zeros(len(pairwise.names))
            c[i] = 1
            est, lo, hi = pairwise.ci(c)
            interactions.append({"a": a, "b": b, "effect_us": est, "ci_low": lo, "ci_high": hi})
    interactions.sort(key=lambda r: -abs(r["effect_us"]))

    bad = forbidden_pairs(ds)
    raw_key, _, method = best_set(ds, values, bad, seed)
    bkey = prune(model, ds, raw_key)
    bpred = float(values.predict_keys(np.array([bkey], dtype=np.int64))[0])
    base_us, base_measured = values(0)
    start = ds.key_of(from_set or [])
    goal_key = ds.key_of(to_set) if to_set is not None else bkey
    members = [j for j in range(len(ds.factors)) if goal_key >> j & 1 and not start >> j & 1]
    phi, n_measured, n_sets = shapley(values, start, members)
    t_from, t_to = values(start)[0], values(goal_key)[0]

    paths = {
        "greedy": path(values, ds, start, members, "greedy"),
        "nice": path(values, ds, start, members, "nice"),
    }
    if order:
        idx = [ds.factors.index(f) for f in order]
        paths["user"] = path(values, ds, start, idx, idx)

    sets = means.reset_index()
    sets["cv"] = sets["std"] / sets["mean"]
    claimed = [
        abs(float(v["effect_us"])) for v in factors.values() if v["ci_low"] > 0 or v["ci_high"] < 0
    ]
    threshold = min(claimed) if claimed else None
    noisy = sets[(sets["n"] >= 2) & (sets["std"] > threshold)] if threshold else sets.iloc[0:0]

    drift = {k: linear.coef().get(k) for k in ("hours", "cos_day", "sin_day")}
    return finite(
        {
            "metric": ds.metric,
            "prediction_model": "pairwise" if use_pairwise else "linear",
            "dataset": {
                "runs": int(len(ds.y)),
                "failed": ds.n_failed,
                "sets": int(len(means)),
                "factors": ds.factors,
                "dropped": ds.dropped,
                "without": without or [],
            },
            "factors": factors,
            "interactions": interactions,
            "best_set": ds.names_of(bkey),
            "best_us": bpred,
            "best_search": method,
            "best_set_raw": ds.names_of(raw_key),
            "base_us": base_us,
            "base_measured": base_measured,
            "shapley": {
                "from": ds.names_of(start),
                "to": ds.names_of(goal_key),
                "values": {ds.factors[b]: v for b, v in phi.items()},
                "total_us": t_to - t_from,
                "sets": n_sets,
                "measured_sets": n_measured,
                "note": "measured means where a subset was measured, the pairwise model elsewhere",
            },
            "paths": paths,
            "models": {
                name: {
                    "r2": fit.r2,
                    "cv_rmse_us": fit.cv_rmse,
                    "log": fit.log,
                    "coef": fit.coef(),
                    "not_estimable": fit.dropped,
                }
                for name, fit in fits.items()
            },
            "better_model": min(fits, key=lambda n: fits[n].cv_rmse or math.inf),
            "drift": drift,
            "pca": pca_of_paths(ds, values),
            "noise": {
                "median_cv": float(sets["cv"].median()) if sets["cv"].notna().any() else None,
                "smallest_claimed_effect_us": threshold,
                "noisy_sets": [
                    {
                        "set": ds.names_of(int(r["key"])),
                        "n": int(r["n"]),
                        "std_us": float(r["std"]),
                        "cv": float(r["cv"]),
                    }
                    for r in noisy.to_dict("records")
                ],
            },
        }
    )


def finite(obj: Any) -> Any:
    """NaN and infinities (an unknown CI) become None, so the JSON stays valid."""
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    if isinstance(obj, dict):
        return {k: finite(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [finite(v) for v in obj]
    return obj
