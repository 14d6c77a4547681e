"""``analyze``: every question asked of a dataset, kept as an ``Analysis`` (with its
set-level inference, for the report) whose ``to_json()`` is the analysis JSON contract
(docs/contracts.md)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from perflab.analysis.bestset import recommend
from perflab.analysis.claims import Predictor
from perflab.analysis.data import Dataset
from perflab.analysis.deltas import deltas
from perflab.analysis.effects import factor_entries, state_dependence
from perflab.analysis.fits import Fit, model_matrix, one_blas_thread
from perflab.analysis.models import Inference, coef01, infer, noise_report
from perflab.analysis.paths import Values, category_rank, forbidden_pairs, path, shapley
from perflab.analysis.pca import pca_of_paths
from perflab.analysis.setstats import covariates
from perflab.analysis.sweeps import sweep_section
from perflab.display import decimals
from perflab.errors import PerflabError
from perflab.run.record import metric_unit

#: The drift terms the JSON's ``drift`` names (null when a term was not fitted).
DRIFT_KEYS = ("hours", "cos_day", "sin_day")


@dataclass
class Analysis:
    """An analysed dataset: its set-level inference (fits, claims), T(S), the exact-pair
    deltas, and the JSON-able result (``to_json()``; also readable as ``analysis["key"]``)."""

    ds: Dataset
    inference: Inference
    values: Values
    deltas: pd.DataFrame
    result: dict[str, Any]

    @property
    def fits(self) -> dict[str, Fit]:
        return self.inference.fits

    @property
    def model(self) -> Fit:
        """The prediction model (chosen by set-grouped cross-validation)."""
        return self.fits.get(self.inference.chosen, self.inference.effects_fit)

    def to_json(self) -> dict[str, Any]:
        return self.result

    def __getitem__(self, key: str) -> Any:
        return self.result[key]

    def fitted(self, name: str) -> np.ndarray:
        """Model ``name``'s fitted values for every run, drift included (log scale for a log
        model); NaN for a model that was not fitted."""
        fit = self.fits.get(name)
        if fit is None:
            return np.full(len(self.ds.y), np.nan)
        s, inv = self.inference.stats, self.inference.inv
        f = model_matrix(s.x, fit.pairs)
        cov, _ = covariates(self.ds.t, self.ds.blocks)
        extra = fit.names[f.shape[1] :]  # between-set drift terms, at each set's mean
        if extra:
            f = np.hstack([f, s.g_mean[:, [s.cov_names.index(n) for n in extra]]])
        out = (f @ fit.beta)[inv]
        if fit.drift is not None:
            for g, name in zip(fit.drift.gamma, fit.drift.names, strict=True):
                out = out + g * cov[name]
        return out


def restrict(ds: Dataset, without: list[str]) -> Dataset:
    """Only the runs that have none of ``without`` (the "keep logs" view)."""
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


def analyze(
    ds: Dataset,
    without: list[str] | None = None,
    from_set: list[str] | None = None,
    to_set: list[str] | None = None,
    order: list[str] | None = None,
    seed: int = 0,
    n_boot: int = 1000,
) -> Analysis:
    """Analyse a dataset; see docs/contracts.md for the keys of ``to_json()``. ``without``
    restricts to runs without those factors; ``from_set``/``to_set`` set the Shapley
    attribution (default: empty set -> predicted best set); ``order`` adds a user-ordered
    path. ``n_boot`` is accepted for compatibility: no interval is bootstrapped any more (t
    intervals over sets; see docs/statistics.md)."""
    with one_blas_thread():  # every product here is small: spare threads only spin
        return _analyze(ds, without, from_set, to_set, order, seed)


def _analyze(
    ds: Dataset,
    without: list[str] | None,
    from_set: list[str] | None,
    to_set: list[str] | None,
    order: list[str] | None,
    seed: int,
) -> Analysis:
    if without:
        ds = restrict(ds, without)
        if not ds.factors:
            raise PerflabError(f"--without {','.join(without)} leaves no factor to analyse")
    for what, names in (("--from", from_set), ("--to", to_set), ("--order", order)):
        if names:
            try:
                ds.key_of(names)
            except PerflabError as exc:
                raise PerflabError(f"{what}: {exc}") from None
    inf = infer(ds.y, ds.x, ds.factors, ds.t, blocks=ds.blocks, seed=seed)
    d = deltas(ds)
    pred = Predictor(inf.fits.get(inf.chosen, inf.effects_fit), len(ds.factors))
    values = Values(inf.stats, pred)
    result = _summary(ds, inf, d, without)
    result.update(_search(ds, pred, values, from_set, to_set, order, seed))
    result["summary"] = summary(result, inf.chosen)
    result["state_dependence"] = state_dependence(d, ds.factors)
    flagged = {r["factor"] for r in result["state_dependence"] if r["significant"]}
    result["best_state_dependent"] = [f for f in result["best_set"] if f in flagged]
    result.update(_models(ds, inf))
    result["pca"] = pca_of_paths(ds, values)
    noise = noise_report(inf, ds.y, ds.names_of)
    claimed = [abs(v["effect_us"]) for v in result["factors"].values() if v["significant"]]
    noise["smallest_claimed_effect_us"] = min(claimed) if claimed else None
    result["noise"] = noise
    result.update(sweep_section(ds, seed))
    return Analysis(ds, inf, values, d, finite(result))


def _summary(
    ds: Dataset, inf: Inference, d: pd.DataFrame, without: list[str] | None
) -> dict[str, Any]:
    """The dataset, how the intervals were obtained, and the corrected claims."""
    return {
        "metric": ds.metric,
        "prediction_model": inf.chosen,
        "dataset": {
            "runs": int(len(ds.y)),
            "failed": ds.n_failed,
            "sets": int(len(inf.stats.n)),
            "factors": ds.factors,
            "dropped": ds.dropped,
            "without": without or [],
        },
        "inference": {
            "effects_model": "pairwise" if inf.effects_fit.pairs else "linear",
            "uncertainty": inf.effects_fit.mode,
            "df": inf.effects_fit.df,
            "rank": inf.effects_fit.rank,
            "parameters": inf.effects_fit.p,
            "factor_claims": "Holm, family-wise 5%",
            "interaction_claims": "Benjamini-Hochberg, FDR 10%",
        },
        "factors": factor_entries(ds, inf.factors, d),
        "interactions": inf.interactions,
        "interactions_note": inf.interactions_note,
        "headline": headline(inf, ds.metric, float(np.median(ds.y)) if len(ds.y) else None),
    }


def headline(
    inf: Inference, metric: str = "us_per_task", level: float | None = None
) -> dict[str, Any]:
    """The one interaction a summary may name: the strongest significant after correction
    (in ``metric``'s unit, to the decimals the metric's ``level`` needs)."""
    sig = [r for r in inf.interactions if r["significant"]]
    if sig:
        r, d = sig[0], decimals(level, least=0, sig=2)
        text = (
            f"strongest interaction {r['a']} x {r['b']} {r['effect_us']:+.{d}f} "
            f"{metric_unit(metric)} (95% CI {r['ci_low']:.{d}f} .. {r['ci_high']:.{d}f}; "
            "significant after correction)"
        )
        return {"interaction": r, "text": text}
    text = inf.interactions_note or "no interaction is significant after correction (BH, 10%)"
    return {"interaction": None, "text": text}


def _support_text(result: dict[str, Any], best_set: list[str], exact: bool) -> str:
    """What the best set's members rest on: pruned, untestable, or each one's saving."""
    pruned = [d["factor"] for d in result.get("best_dropped", [])]
    untested = list(result.get("best_unsupported", []))
    said = []
    if pruned:
        said.append("pruned from the fastest predicted set (saving not significant after "
                    "Holm): " + ", ".join(pruned))  # fmt: skip
    if untested:
        said.append("kept but not testable (its removal is not predictable or not allowed): "
                    + ", ".join(untested))  # fmt: skip
    if not said:
        said.append(
            ("every member saves time (exact data: no test)" if exact else
             "every member's saving is significant after Holm") if best_set else "-"
        )  # fmt: skip
    return "; ".join(said)


def summary(result: dict[str, Any], model: str) -> dict[str, Any]:
    """The headline numbers, owned here and printed as they are by the terminal, the HTML
    page and the JSON: untreated and best set, the speed-up and its interval.

    The speed-up is the prediction model's T(untreated) / T(best) with its t interval
    (``best_speedup``), so the base it divides is the model's prediction of the untreated
    set, not the measured mean shown beside it: dividing a measured base by a predicted best
    gave a second number for the same fact. ``lines`` are the wording every output uses."""
    sp = result.get("best_speedup") or {}
    best = float(result["best_us"])
    ratio = sp.get("ratio")
    if ratio is None or not math.isfinite(ratio) or not best > 0:
        ratio = None
    base_pred = ratio * best if ratio is not None else None
    ci, pi = sp.get("ci"), sp.get("pi_us")
    measured = float(result["base_us"]) if result.get("base_measured") else None
    best_set = list(result["best_set"])
    unit = metric_unit(result.get("metric", "us_per_task"))  # the metric analysed, not µs/task
    d, dp = decimals(best), decimals(best, least=0, sig=2)
    base_text = (
        f"{base_pred:,.{d}f} {unit} predicted" if base_pred is not None else "not predictable"
    ) + (f" (measured mean {measured:,.{d}f})" if measured is not None else " (not measured)")
    best_text = (
        f"{best:,.{d}f} {unit} predicted with "
        + ("[" + ", ".join(best_set) + "]" if best_set else "no treatment")
        + (f"; one run: {pi[0]:,.{dp}f}..{pi[1]:,.{dp}f} {unit} (95% PI)" if pi else "")
    )
    speedup_text = _speedup_text(ratio, ci, bool(sp.get("exact")))
    if sp.get("untreated"):
        speedup_text = "none: no treatment is recommended (1.00x by definition)"
    support_text = _support_text(result, best_set, bool(sp.get("exact")))
    return {
        "model": model,
        "base_us": base_pred,
        "base_measured_us": measured,
        "best_us": best,
        "best_set": best_set,
        "speedup": ratio,
        "speedup_ci": list(ci) if ci else None,
        "best_pi_us": list(pi) if pi else None,
        "lines": {
            "untreated": base_text,
            "best": best_text,
            "speed-up": speedup_text,
            "support": support_text,
        },
    }


def _speedup_text(ratio: float | None, ci: list[float] | None, exact: bool) -> str:
    if ratio is None:
        return "n/a"
    if ci:
        return f"{ratio:.2f}x (95% CI {ci[0]:.2f}..{ci[1]:.2f}x)"
    return f"{ratio:.2f}x" + (" (exact data: no interval)" if exact else " (no interval)")


def _models(ds: Dataset, inf: Inference) -> dict[str, Any]:
    fits = inf.fits
    return {
        "models": {
            name: {
                "r2": fit.r2,
                "cv_rmse_us": inf.cv.get(name),
                "log": fit.log,
                "coef": coef01(fit, ds.factors),
                "not_estimable": [fit.names[j] for j in range(fit.p) if fit.aliases(j)],
                "eligible": not inf.eligible[name],
                "why_not": inf.eligible[name] or None,
                "uncertainty": fit.mode,
                "df": fit.df,
            }
            for name, fit in fits.items()
        },
        "model_choice": {
            "cv": "5-fold, folds drawn over distinct treatment sets",
            "chosen": inf.chosen,
            "nested_f_pairwise_vs_linear": inf.nested,
            "ineligible": {n: why for n, why in inf.eligible.items() if why},
        },
        "better_model": inf.chosen,
        "drift": {n: (inf.drift["terms"].get(n) or {}).get("estimate") for n in DRIFT_KEYS},
        "drift_detail": inf.drift,
    }


def _search(
    ds: Dataset,
    pred: Predictor,
    values: Values,
    from_set: list[str] | None,
    to_set: list[str] | None,
    order: list[str] | None,
    seed: int,
) -> dict[str, Any]:
    """The best set, the Shapley attribution from ``from_set`` to ``to_set`` and the paths."""
    idx = {f: j for j, f in enumerate(ds.factors)}
    requires = [(idx[a], idx[b]) for a, b in ds.meta.requires if a in idx and b in idx]
    ranks = [category_rank(ds, f) for f in ds.factors]
    rec = recommend(pred, ds.factors, forbidden_pairs(ds), requires, ranks)
    bkey = rec["key"]
    base_us, base_measured = values(0)
    start = ds.key_of(from_set or [])
    goal_key = ds.key_of(to_set) if to_set is not None else bkey
    members = [j for j in range(len(ds.factors)) if goal_key >> j & 1 and not start >> j & 1]
    phi, n_measured, n_sets = shapley(values, start, members)
    paths = {
        "greedy": path(values, ds, start, members, "greedy"),
        "nice": path(values, ds, start, members, "nice"),
    }
    if order:
        oi = [ds.factors.index(f) for f in order]
        paths["user"] = path(values, ds, start, oi, oi)
    return {
        "best_set": ds.names_of(bkey),
        "best_us": rec["best_us"],
        "best_search": rec["method"],
        "best_set_raw": ds.names_of(rec["raw_key"]),
        "best_speedup": rec["speedup"],
        "best_members": rec["members"],
        "best_dropped": rec["dropped"],
        "best_unsupported": rec["unsupported"],
        "base_us": base_us,
        "base_measured": base_measured,
        "shapley": {
            "from": ds.names_of(start),
            "to": ds.names_of(goal_key),
            "values": {ds.factors[b]: v for b, v in phi.items()},
            "total_us": values(goal_key)[0] - values(start)[0],
            "sets": n_sets,
            "measured_sets": n_measured,
            "note": "measured means where a subset was measured, the prediction model elsewhere",
        },
        "paths": paths,
    }


def finite(obj: Any) -> Any:
    """NaN and infinities (an unknown CI) become None, so the JSON stays valid."""
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    if isinstance(obj, dict):
        return {k: finite(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [finite(v) for v in obj]
    return obj
