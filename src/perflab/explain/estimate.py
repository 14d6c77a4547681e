"""The statistics of ``explain``: the screen's main effects, and the focus stage's shares.

Everything is fitted on the log of the metric (run-to-run noise is multiplicative), with
statsmodels OLS. A *share* is on the metric's own scale: the part of the step B − A that
reverting one change in B takes away, ``(y_B − y_{B+f}) / (y_B − y_A)``; with ``r = y/y_B``
from the log fit that is ``(1 − r_f) / (1 − r_A)``, and its interval is the delta method's
on the fit's covariance. Claims (a change explains part of the step) are Holm-corrected over
every factor the focus stage measured.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from perflab.analysis.exact import EXACT_RTOL
from perflab.analysis.stats import adjust, t_ppf

#: The focus stage's condition names: the two releases, and B with every survivor reverted.
A, B, ALL = "A", "B", "B+all"


def screen_effects(
    rows: list[tuple[list[str], float]], factors: list[str]
) -> dict[str, dict[str, Any]]:
    """Main effect of reverting each factor (log scale) from a two-level screen: a robust
    (Huber) regression of log(value) on 0/1 indicators, so one run disturbed by the shared
    machine does not hide a factor; ``p`` two-sided. Runs without a value are left out."""
    import statsmodels.api as sm

    x = np.array([[1.0 if f in s else 0.0 for f in factors] for s, _ in rows])
    y = np.log(np.array([v for _, v in rows], float))
    design = sm.add_constant(x, has_constant="add")
    fit = sm.RLM(y, design, M=sm.robust.norms.HuberT()).fit()
    if not np.all(np.isfinite(fit.pvalues)):  # a degenerate scale: plain least squares
        fit = sm.OLS(y, design).fit()
    # exact data (a deterministic metric): an effect is what was measured, with no test
    # (explain/driver.py: survives)
    exact = exact_fit(y, design)
    aliased = _aliased(design)
    out: dict[str, dict[str, Any]] = {}
    for i, f in enumerate(factors):
        if aliased[i + 1]:  # the runs measured cannot tell it apart: no number (it had p = 0)
            with_ = [factors[j - 1] if j else "the mean" for j in aliased[i + 1]]
            why = f"unassessable: aliased among the ok runs with {', '.join(with_)}"
            out[f] = {"effect": None, "p": None, "ratio": None, "why": why}
            continue
        p = float(fit.pvalues[i + 1]) if fit.df_resid > 0 else float("nan")
        if exact is not None:
            b = float(exact[i + 1])
            out[f] = {"effect": b, "p": None, "ratio": math.exp(b), "exact": True}
            continue
        out[f] = {"effect": float(fit.params[i + 1]), "p": p, "ratio": math.exp(fit.params[i + 1]),
                  "se": float(fit.bse[i + 1])}  # fmt: skip
    return out


def _aliased(design: np.ndarray, tol: float = 1e-8) -> list[list[int]]:
    """For each column, the other columns it cannot be told apart from (empty when its
    coefficient is estimable): those its null-space projection touches."""
    _, sv, vt = np.linalg.svd(design, full_matrices=True)
    rank = int(np.sum(sv > tol * max(sv.max(initial=0.0), 1.0)))
    null = vt[rank:].T  # columns span the null space
    proj = null @ null.T
    return [
        [int(k) for k in np.flatnonzero(np.abs(proj[j]) > tol) if k != j]
        if proj[j, j] > tol
        else []
        for j in range(design.shape[1])
    ]


def exact_fit(y: np.ndarray, design: np.ndarray) -> np.ndarray | None:
    """The least-squares coefficients (those within rounding of 0 made 0) when log ``y`` is
    fitted exactly with residual degrees of freedom to show it, else None (see
    analysis/exact.py: on the log scale a residual is a relative error)."""
    if len(y) <= np.linalg.matrix_rank(design):
        return None
    beta, *_ = np.linalg.lstsq(design, y, rcond=None)
    if float(np.sqrt(np.mean((y - design @ beta) ** 2))) > EXACT_RTOL:
        return None
    return np.where(np.abs(beta) <= EXACT_RTOL, 0.0, beta)


def _fit(rows: list[tuple[str, int, float]]) -> Any:
    import pandas as pd
    import statsmodels.formula.api as smf

    df = pd.DataFrame(rows, columns=["cond", "round", "value"])
    df["y"] = np.log(df["value"])
    blocks = " + C(round)" if df["round"].nunique() > 1 else ""
    return smf.ols(f"y ~ C(cond, Treatment('{B}')){blocks}", data=df).fit()


def _coef(name: str) -> str:
    return f"C(cond, Treatment('{B}'))[T.{name}]"


def _share(fit: Any, cond: str, conf: float) -> dict[str, float]:
    """(1 − r_cond) / (1 − r_A) with a delta-method interval."""
    ka, kc = _coef(A), _coef(cond)
    ba, bc = float(fit.params[ka]), float(fit.params[kc])
    cov = fit.cov_params().loc[[kc, ka], [kc, ka]].to_numpy()
    den = 1 - math.exp(ba)
    share = (1 - math.exp(bc)) / den
    grad = np.array([-math.exp(bc) / den, (1 - math.exp(bc)) * math.exp(ba) / den**2])
    se = float(math.sqrt(max(grad @ cov @ grad, 0.0)))
    t = float(t_ppf(0.5 + conf / 2, fit.df_resid))
    return {"share": share, "low": share - t * se, "high": share + t * se, "se": se}


def focus_estimates(
    rows: list[tuple[str, int, float]],
    factors: list[str],
    alpha: float = 0.05,
    threshold: float = 0.05,
) -> dict[str, Any]:
    """The step, each factor's share with its interval and Holm-corrected p, and the
    residual (B with every factor reverted against A) from the focus stage's runs
    (condition, round, value). A factor is claimed when its Holm p is below ``alpha`` and
    its share is at least ``threshold`` of a step the focus stage confirms."""
    fit = _fit(rows)
    conf = 1 - alpha
    t = float(t_ppf(0.5 + conf / 2, fit.df_resid))
    ka = _coef(A)
    step_log = -float(fit.params[ka])
    se_a = float(fit.bse[ka])
    out: dict[str, Any] = {
        "df_resid": float(fit.df_resid),
        "confidence": conf,
        "step": {
            "ratio": math.exp(step_log),
            "low": math.exp(step_log - t * se_a),
            "high": math.exp(step_log + t * se_a),
            "p": float(fit.pvalues[ka]),
        },
        "factors": {},
    }
    # a share of a step the focus stage does not see again (its interval covers no change)
    # has a denominator near 0: its number and interval mean nothing and nothing is claimed
    lo, hi = out["step"]["low"], out["step"]["high"]
    out["step"]["confirmed"] = bool(lo > 1 or hi < 1)
    exact = fit.df_resid > 0 and math.sqrt(fit.ssr / fit.nobs) <= EXACT_RTOL
    if exact:  # a deterministic metric: the step and each share are what was measured
        out["exact"] = True
        out["step"].update(low=out["step"]["ratio"], high=out["step"]["ratio"], p=None)
        out["step"]["confirmed"] = abs(step_log) > EXACT_RTOL
    ps = [float(fit.pvalues[_coef(f)]) for f in factors]
    adj = adjust(ps, "holm", alpha)[0]
    for f, p, pa in zip(factors, ps, adj, strict=True):
        k = _coef(f)
        share = _share(fit, f, conf)
        if exact:  # no test, no width (analysis/exact.py)
            share.update(low=share["share"], high=share["share"], se=0.0)
            out["factors"][f] = {
                "ratio": math.exp(float(fit.params[k])), "p": None, "p_holm": None,
                "claimed": out["step"]["confirmed"] and abs(share["share"]) >= threshold,
                "exact": True, **share,
            }  # fmt: skip
            continue
        out["factors"][f] = {
            "ratio": math.exp(float(fit.params[k])),  # B+f / B
            "se_log": float(fit.bse[k]),
            "p": p,
            "p_holm": float(pa),
            # named only if it explains a part of the step worth naming: precise runs make
            # a 0.1% effect significant, and the threshold that makes a step worth
            # explaining makes a share worth claiming
            "claimed": bool(pa < alpha)
            and out["step"]["confirmed"]
            and abs(share["share"]) >= threshold,
            **share,
        }
    claimed = [f for f, e in out["factors"].items() if e["claimed"]]
    if len(claimed) > 1:
        out["claimed_sum"] = _sum_share(fit, claimed, conf, bool(exact))
    # B with every factor reverted (one factor: that factor's condition) against A
    every = ALL if ALL in {r[0] for r in rows} else (factors[0] if len(factors) == 1 else None)
    if every is not None:
        out["joint"] = _share(fit, every, conf)
        out["residual"] = residual(fit, every, conf, threshold)
    return out


def _sum_share(fit: Any, conds: list[str], conf: float, exact: bool) -> dict[str, Any]:
    """The claimed factors' shares added up, with a delta-method interval (the shares share
    the fit, so their covariances count). ``overlap``: the sum is past 100 % beyond its
    interval, so some part of the step is claimed by more than one factor (a revert that
    contains another, or two changes that each undo the same cost)."""
    ka, ks = _coef(A), [_coef(c) for c in conds]
    ba, bs = float(fit.params[ka]), [float(fit.params[k]) for k in ks]
    den = 1 - math.exp(ba)
    parts = sum(1 - math.exp(b) for b in bs)
    total = parts / den
    grad = np.array([*(-math.exp(b) / den for b in bs), parts * math.exp(ba) / den**2])
    cov = fit.cov_params().loc[[*ks, ka], [*ks, ka]].to_numpy()
    se = 0.0 if exact else float(math.sqrt(max(grad @ cov @ grad, 0.0)))
    t = float(t_ppf(0.5 + conf / 2, fit.df_resid))
    low, high = total - t * se, total + t * se
    return {
        "factors": conds, "share": total, "low": low, "high": high,
        "overlap": bool(low > 1 + EXACT_RTOL),
    }  # fmt: skip


def residual(fit: Any, cond: str, conf: float, threshold: float) -> dict[str, Any]:
    """``cond`` against A: the ratio y_cond / y_A with its interval, and "no difference" when
    that interval lies within ±threshold (equivalence, as the compare gate says it)."""
    kc, ka = _coef(cond), _coef(A)
    d = float(fit.params[kc] - fit.params[ka])
    c = np.zeros(len(fit.params))
    names = list(fit.params.index)
    c[names.index(kc)], c[names.index(ka)] = 1.0, -1.0
    se = float(math.sqrt(c @ fit.cov_params().to_numpy() @ c))
    t = float(t_ppf(0.5 + conf / 2, fit.df_resid))
    lo, hi = d - t * se, d + t * se
    bound = math.log1p(threshold)
    verdict = (
        "no difference"
        if -bound <= lo and hi <= bound
        else ("residual" if lo > 0 or hi < 0 else "inconclusive")
    )
    return {
        "cond": cond,
        "ratio": math.exp(d),
        "low": math.exp(lo),
        "high": math.exp(hi),
        "verdict": verdict,
    }


def contained(tables: dict[str, Any], factors: list[str]) -> list[list[str]]:
    """Each pair [x, y] of ``factors`` not varied apart: x reverts whole a module y changes
    (a module revert holds every hunk and default of its modules), so reverting x reverts y
    too and their shares count the same part of the step."""

    def modules(f: str, whole: bool) -> set[str]:
        ops = tables.get(f, {}).get("transform") or []
        return {t["module"] for t in ops
                if "module" in t and (t.get("op") == "replace_module") == whole}  # fmt: skip

    return [
        [x, y]
        for x in factors
        for y in factors
        if x != y and modules(x, True) & (modules(y, False) | modules(y, True))
    ]
