"""Does the noop-task ranking of HTEX treatments hold on a real workflow (Montage-1000)?

Two campaigns of the same explicit design (bench/zoo_transfer_sets.txt: prefetch_capacity
0/10/100/1000 × NoopLogging), one on noop tasks and one on the wfcommons Montage-1000
workflow, run alternately one run at a time (``--run``), so both see the same load:

    perflab campaign create tx-noop --target parsl-htex --workload noop --tasks 1000 \\
        --factors "cfg_prefetch=10,cfg_prefetch=100,cfg_prefetch=1000,cfg_noop_logging" \\
        --design explicit --design-opt file=bench/zoo_transfer_sets.txt --replicates 3
    perflab campaign create tx-montage ... --workload wfcommons --param recipe=montage \\
        --param size=1000 --tasks 2000 --warmup 4 (same factors and design)
    python bench/zoo_transfer.py --run tx-noop tx-montage       # alternate, then analyse

For each workload: each set's mean wall µs per task (95% t-interval on the log scale), the
sets' ranking, Kendall's tau between the two rankings with a bootstrap interval (replicates
resampled within sets), and NoopLogging's effect (on ÷ off wall ratio) at each prefetch
level, Welch t on log wall, Holm-corrected across the eight tests.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats
from statsmodels.stats.multitest import multipletests

from perflab.campaign.store import Store


def alternate(store: Store, names: list[str]) -> None:
    """Run the campaigns' pending runs one at a time, alternating between them."""
    while any(store.counts(n)["done"] < store.counts(n)["planned"] for n in names):
        for n in names:
            if store.counts(n)["done"] < store.counts(n)["planned"]:
                subprocess.run(
                    [sys.executable, "-m", "perflab", "campaign", "run", n, "--max-runs", "1"],
                    check=False,
                    capture_output=True,
                )


def frame(store: Store, name: str) -> pd.DataFrame:
    rows = []
    for r in store.records(name):
        if r.status != "ok":
            continue
        prefetch = next(
            (t.split("=")[1] for t in r.treatments if t.startswith("cfg_prefetch")), "0"
        )
        rows.append(
            {
                "set": ",".join(sorted(r.treatments)) or "-",
                "prefetch": int(prefetch),
                "noop_logging": "cfg_noop_logging" in r.treatments,
                "us_per_task": r.wall_s / r.tasks * 1e6,
            }
        )
    return pd.DataFrame(rows)


def summary(df: pd.DataFrame) -> pd.DataFrame:
    out = []
    for s, g in df.groupby("set"):
        x = np.log(g["us_per_task"].to_numpy())
        m, se = x.mean(), x.std(ddof=1) / np.sqrt(len(x))
        h = stats.t.ppf(0.975, len(x) - 1) * se
        out.append(
            {"set": s, "n": len(x), "us": np.exp(m), "lo": np.exp(m - h), "hi": np.exp(m + h)}
        )
    res = pd.DataFrame(out).sort_values("us", ignore_index=True)
    res["rank"] = range(1, len(res) + 1)
    return res


def tau_interval(a: pd.DataFrame, b: pd.DataFrame, n: int = 2000) -> tuple[float, float, float]:
    """Kendall's tau of the sets' means, with a percentile bootstrap over replicates."""
    sets = sorted(set(a["set"]) & set(b["set"]))
    rng = np.random.default_rng(0)

    def means(df: pd.DataFrame, boot: bool) -> list[float]:
        out = []
        for s in sets:
            x = np.log(df[df["set"] == s]["us_per_task"].to_numpy())
            out.append(float(rng.choice(x, len(x)).mean() if boot else x.mean()))
        return out

    tau = stats.kendalltau(means(a, False), means(b, False)).statistic
    boots = [stats.kendalltau(means(a, True), means(b, True)).statistic for _ in range(n)]
    lo, hi = np.nanpercentile(boots, [2.5, 97.5])
    return float(tau), float(lo), float(hi)


def noop_effects(dfs: dict[str, pd.DataFrame]) -> pd.DataFrame:
    rows: list[dict[str, Any]] = []
    for wl, df in dfs.items():
        for p, g in df.groupby("prefetch"):
            on = np.log(g[g["noop_logging"]]["us_per_task"].to_numpy())
            off = np.log(g[~g["noop_logging"]]["us_per_task"].to_numpy())
            t = stats.ttest_ind(on, off, equal_var=False)
            ci = t.confidence_interval(0.95)
            rows.append(
                {"workload": wl, "prefetch": p, "ratio": float(np.exp(on.mean() - off.mean())),
                 "lo": float(np.exp(ci.low)), "hi": float(np.exp(ci.high)), "p": float(t.pvalue)}
            )  # fmt: skip
    res = pd.DataFrame(rows)
    res["p_holm"] = multipletests(res["p"], method="holm")[1]
    return res


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("noop")
    ap.add_argument("workflow")
    ap.add_argument("--store", default=".perflab/perflab.db")
    ap.add_argument("--run", action="store_true", help="run the pending runs first, alternately")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    store = Store(a.store)
    if a.run:
        alternate(store, [a.noop, a.workflow])
    dfs = {"noop": frame(store, a.noop), "montage-1000": frame(store, a.workflow)}
    sums = {k: summary(v) for k, v in dfs.items()}
    tau = tau_interval(dfs["noop"], dfs["montage-1000"])
    eff = noop_effects(dfs)
    if a.json:
        print(json.dumps({"summary": {k: v.to_dict("records") for k, v in sums.items()},
                          "kendall_tau": tau, "noop_logging": eff.to_dict("records")}))  # fmt: skip
        return
    for k, v in sums.items():
        print(f"\n{k}: wall µs per task by set (95% CI), fastest first")
        print(v.to_string(index=False, float_format=lambda x: f"{x:,.1f}"))
    print(
        f"\nKendall tau of the two rankings: {tau[0]:.2f} (bootstrap 95% {tau[1]:.2f}–{tau[2]:.2f})"
    )
    print("\nNoopLogging on ÷ off, wall per task (Welch on logs, Holm over all rows):")
    print(eff.to_string(index=False, float_format=lambda x: f"{x:.3g}"))


if __name__ == "__main__":
    main()
