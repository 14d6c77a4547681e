"""Issue 27's network studies, read from a campaign in a perflab store.

    .venv/bin/python bench/net_study.py prefetch --store S.db --campaign C [--figure F.png]
    .venv/bin/python bench/net_study.py levels --store S.db --campaign C [--by net_rtt_ms]

``prefetch``: a ``cfg_prefetch`` × ``net_rtt_ms`` grid (``--design sweep``). Fits
log(tasks/s) ~ C(prefetch) * C(rtt) by least squares (statsmodels), and prints each cell's
mean tasks/s (95% t-interval), the prefetch effect at each RTT as a ratio of tasks/s over
prefetch 0 with its 95% interval (Holm-corrected p over all of them), the interaction F-test
(does the effect differ between RTTs?), and, for "does prefetch help more as latency
grows", each effect's change from the smallest RTT to the largest with its interval.

``levels``: mean tasks/s with a 95% t-interval for each level of one numeric factor (the
saga rows over ``net_rtt_ms``, the services curve), plus the env.net each run recorded; over
``net_rtt_ms``, also the line seconds/task = a + b·RTT (b: round trips each task waits for).
"""

from __future__ import annotations

import argparse
import math
from typing import Any

import numpy as np
import pandas as pd

from perflab.analysis.stats import holm, mean_ci, nested_f
from perflab.campaign.store import Store


def frame(store: str, campaign: str) -> pd.DataFrame:
    """One row per ok run: its numeric levels (one column per factor), tasks/s, env.net."""
    rows: list[dict[str, Any]] = []
    records = Store(store).records(campaign)
    failed = [r for r in records if r.status != "ok"]
    for r in records:
        if r.status != "ok" or not r.tasks_per_s:
            continue
        row: dict[str, Any] = {"tasks_per_s": r.tasks_per_s, "net": r.env.get("net")}
        for t in r.treatments:
            name, _, level = t.partition("=")
            row[name] = float(level) if level else 1.0
        rows.append(row)
    print(f"{campaign}: {len(rows)} ok runs, {len(failed)} failed")
    for r in failed[:5]:
        print(f"  failed {r.treatments}: {(r.error or '').splitlines()[-1:]}")
    return pd.DataFrame(rows)


def t_interval(x: pd.Series) -> tuple[float, float, float]:
    m, lo, hi = mean_ci(x.to_numpy(float))
    return m, math.nan if lo is None else lo, math.nan if hi is None else hi


def levels(df: pd.DataFrame, by: str) -> None:
    nets = sorted({str(n) for n in df["net"]})
    print(f"env.net recorded: {nets}")
    for level, g in df.groupby(by):
        m, lo, hi = t_interval(g["tasks_per_s"])
        print(f"  {by}={level:g}: {m:.2f} tasks/s (95% CI {lo:.2f}-{hi:.2f}, n={len(g)})")
    if by == "net_rtt_ms" and df[by].nunique() > 1:
        import statsmodels.formula.api as smf

        # seconds per task = a + b * RTT: b is the number of round trips each task waits for
        d = pd.DataFrame({"s": 1 / df["tasks_per_s"], "rtt_s": df[by] / 1000})
        fit = smf.ols("s ~ rtt_s", data=d).fit()
        (a_lo, b_lo), (a_hi, b_hi) = fit.conf_int(0.05).values.T
        a, b = fit.params["Intercept"], fit.params["rtt_s"]
        print(f"  s/task = {a * 1000:.1f} ms (95% CI {a_lo * 1000:.1f}-{a_hi * 1000:.1f}) + "
              f"{b:.2f} (95% CI {b_lo:.2f}-{b_hi:.2f}) x RTT; R2 {fit.rsquared:.3f}")  # fmt: skip


def prefetch(df: pd.DataFrame, figure: str | None) -> None:
    import statsmodels.formula.api as smf

    df = df.rename(columns={"cfg_prefetch": "pf", "net_rtt_ms": "rtt"}).copy()
    df["pf"] = df.get("pf", pd.Series(0.0, index=df.index)).fillna(0.0)
    df["log_rate"] = np.log(df["tasks_per_s"])
    pfs, rtts = sorted(df["pf"].unique()), sorted(df["rtt"].unique())
    print("cells: mean tasks/s (95% t-interval, n)")
    cells: dict[tuple[float, float], tuple[float, float, float]] = {}
    for (pf, rtt), g in df.groupby(["pf", "rtt"]):
        cells[(pf, rtt)] = t_interval(g["tasks_per_s"])
        m, lo, hi = cells[(pf, rtt)]
        print(f"  prefetch {pf:>5g}  rtt {rtt:>3g} ms: {m:8.1f} ({lo:.1f}-{hi:.1f}, {len(g)})")
    fit = smf.ols("log_rate ~ C(pf) * C(rtt)", data=df).fit()
    # the interaction as one F-test: the full model against the additive one
    additive = smf.ols("log_rate ~ C(pf) + C(rtt)", data=df).fit()
    f, p_f = nested_f((additive.ssr, additive.df_resid), (fit.ssr, fit.df_resid))
    print(
        f"interaction prefetch x rtt: F = {f:.2f}, p = {p_f:.3g} "
        f"(df {additive.df_resid - fit.df_resid:g}, {fit.df_resid:g})"
    )
    names = list(fit.params.index)
    effects, pvals, rows = [], [], []
    for rtt in rtts:
        for pf in pfs[1:]:
            c = _contrast(names, pf, rtt, rtts[0])
            t = fit.t_test(c)
            est, (lo, hi) = float(np.squeeze(t.effect)), np.squeeze(t.conf_int(0.05))
            effects.append((pf, rtt, est, lo, hi))
            pvals.append(float(np.squeeze(t.pvalue)))
    p_holm = holm(np.array(pvals), 0.05)[0]
    print("prefetch effect: tasks/s ratio over prefetch 0 at the same RTT")
    for (pf, rtt, est, lo, hi), p in zip(effects, p_holm, strict=True):
        print(f"  prefetch {pf:>5g} at rtt {rtt:>3g} ms: x{math.exp(est):.3f} "
              f"(95% CI {math.exp(lo):.3f}-{math.exp(hi):.3f}), Holm p = {p:.3g}")  # fmt: skip
        rows.append((pf, rtt, math.exp(est)))
    print(f"does the effect grow with latency? (rtt {rtts[-1]:g} vs {rtts[0]:g} ms)")
    for pf in pfs[1:]:
        c = _contrast(names, pf, rtts[-1], rtts[0]) - _contrast(names, pf, rtts[0], rtts[0])
        t = fit.t_test(c)
        est, (lo, hi) = float(np.squeeze(t.effect)), np.squeeze(t.conf_int(0.05))
        print(f"  prefetch {pf:g}: effect ratio x{math.exp(est):.3f} "
              f"(95% CI {math.exp(lo):.3f}-{math.exp(hi):.3f}), "
              f"p = {float(np.squeeze(t.pvalue)):.3g}")  # fmt: skip
    if figure:
        _figure(cells, pfs, rtts, figure)


def _contrast(names: list[str], pf: float, rtt: float, rtt0: float) -> np.ndarray:
    """The coefficient vector of log(rate[pf, rtt]) - log(rate[0, rtt]) in treatment coding."""
    c = np.zeros(len(names))
    for i, n in enumerate(names):
        pf_term = f"C(pf)[T.{pf}]"
        if n == pf_term or (rtt != rtt0 and n == f"{pf_term}:C(rtt)[T.{rtt}]"):
            c[i] = 1.0
    return c


def _figure(cells: dict[tuple[float, float], tuple[float, float, float]], pfs: list[float],
            rtts: list[float], path: str) -> None:  # fmt: skip
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 4))
    xs = np.arange(len(rtts))
    for k, pf in enumerate(pfs):
        m = np.array([cells[(pf, r)][0] for r in rtts])
        lo = np.array([cells[(pf, r)][1] for r in rtts])
        hi = np.array([cells[(pf, r)][2] for r in rtts])
        off = (k - (len(pfs) - 1) / 2) * 0.08
        ax.errorbar(xs + off, m, yerr=[m - lo, hi - m], marker="o", capsize=3,
                    label=f"prefetch {pf:g}")  # fmt: skip
    ax.set_xticks(xs, [f"{r:g}" for r in rtts])
    ax.set_xlabel("net_rtt_ms (round trip, workers ↔ interchange)")
    ax.set_ylabel("tasks/s (mean, 95% CI)")
    ax.set_title("HTEX noop: prefetch against network round trip")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    print(f"figure: {path}")


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("study", choices=["prefetch", "levels"])
    ap.add_argument("--store", required=True)
    ap.add_argument("--campaign", required=True)
    ap.add_argument("--by", default="net_rtt_ms")
    ap.add_argument("--figure")
    a = ap.parse_args()
    df = frame(a.store, a.campaign)
    if df.empty:
        raise SystemExit("no ok runs")
    if a.study == "prefetch":
        prefetch(df, a.figure)
    else:
        levels(df, a.by)


if __name__ == "__main__":
    main()
