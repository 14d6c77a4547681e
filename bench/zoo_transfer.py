"""Does the noop-task ranking of HTEX treatments hold on a real workflow (Montage-1000)?

Campaigns of one explicit design (bench/zoo_transfer_sets.txt: prefetch_capacity
0/10/100/1000 × NoopLogging), some on noop tasks and some on the wfcommons Montage-1000
workflow, run alternately one run at a time (``--run``), so both see the same load:

    F=cfg_prefetch=10,cfg_prefetch=100,cfg_prefetch=1000,cfg_noop_logging
    D="--design explicit --design-opt file=bench/zoo_transfer_sets.txt --runs 4"
    perflab campaign create tx-noop -t parsl-htex -w noop --tasks 1000 --factors $F $D
    perflab campaign create tx-montage -t parsl-htex -w wfcommons --param recipe=montage \\
        --param size=1000 --tasks 2000 --warmup 4 --factors $F $D
    python bench/zoo_transfer.py tx-noop tx-montage --run --minutes 40   # alternate, analyse
    python bench/zoo_transfer.py tx-noop,tx2-noop tx-montage,tx2-montage # several campaigns

Each campaign's replicate blocks hold every set once, so a set is compared with HTEX's
default (``-``) within its block: a paired ratio (geometric mean, t interval on the log
ratios).  Printed for each workload: each set's mean wall µs per task (95% t-interval on
the log scale) and rank; each set ÷ default paired; Kendall's tau between the two rankings
with a bootstrap interval (blocks resampled) and scipy's exact p against independent
rankings, beside the tau between the noop campaigns' own two halves of blocks (how
reproducible the noop ranking is at all); and NoopLogging's effect (on ÷ off, paired in
a block) at each prefetch level; and each set's effect on the workflow ÷ its effect on
noop (1: the effect transfers; Welch on the log ratios); Holm within each of these three
families of tests (vs default, NoopLogging, transfer).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
import warnings
from typing import Any

import numpy as np
import pandas as pd

from perflab.analysis.stats import holm, kendall_tau, mean_ci, paired_t, welch_ci, welch_p
from perflab.campaign.store import Store
from perflab.compare.stats import paired_ratio


def alternate(store: Store, names: list[str], until: float) -> None:
    """Run the campaigns' pending runs one at a time, alternating between them, until all
    are done or the clock passes ``until`` (a started round is finished)."""
    while any(store.counts(n)["done"] < store.counts(n)["planned"] for n in names):
        if time.time() > until:
            print("deadline reached: stopping with runs pending", flush=True)
            return
        for n in names:
            if store.counts(n)["done"] < store.counts(n)["planned"]:
                t0 = time.time()
                subprocess.run(
                    [sys.executable, "-m", "perflab", "campaign", "run", n, "--max-runs", "1"],
                    check=False,
                    capture_output=True,
                )
                load = os.getloadavg()[0]
                c = store.counts(n)
                print(f"{time.strftime('%H:%M:%S')} {n} {c['done']}/{c['planned']} "
                      f"{time.time() - t0:.0f} s load {load:.1f}", flush=True)  # fmt: skip


def frame(store: Store, names: list[str]) -> pd.DataFrame:
    """The ok runs of the campaigns: set, prefetch, NoopLogging, block, µs per task, and
    the workflow's overhead (makespan − list-scheduled ideal) where there is one."""
    rows = []
    for name in names:
        blocks = store.replicates(name)
        for r in store.records(name):
            if r.status != "ok":
                continue
            prefetch = next(
                (t.split("=")[1] for t in r.treatments if t.startswith("cfg_prefetch")), "0"
            )
            wl = (r.measurement or {}).get("workload") or {}
            rows.append(
                {"set": ",".join(sorted(r.treatments)) or "-", "prefetch": int(prefetch),
                 "noop_logging": "cfg_noop_logging" in r.treatments,
                 "block": f"{name}#{blocks.get(r.run_id, -1)}",
                 "us_per_task": r.wall_s / r.tasks * 1e6,
                 "overhead_s": wl.get("overhead_s", np.nan)}
            )  # fmt: skip
    return pd.DataFrame(rows)


def summary(df: pd.DataFrame) -> pd.DataFrame:
    """Each set's geometric mean µs per task with its 95% t interval, ranked fastest first."""
    out = []
    for s, g in df.groupby("set"):
        x = np.log(g["us_per_task"].to_numpy())
        m, lo, hi = mean_ci(x)
        lo, hi = (np.nan, np.nan) if lo is None or hi is None else (lo, hi)
        out.append({"set": s, "n": len(x), "us": np.exp(m), "lo": np.exp(lo), "hi": np.exp(hi)})
    res = pd.DataFrame(out).sort_values("us", ignore_index=True)
    res["rank"] = range(1, len(res) + 1)
    return res


def paired(df: pd.DataFrame, a: str, b: str, col: str = "us_per_task") -> list[float]:
    """b ÷ a of ``col`` in every block that has both sets (a block holds each set once)."""
    w = df.pivot_table(index="block", columns="set", values=col, aggfunc="first")
    if a not in w or b not in w:
        return []
    both = w[[a, b]].dropna()
    both = both[(both[a] > 0) & (both[b] > 0)]
    return list(both[b] / both[a])


def ratio_row(ratios: list[float]) -> dict[str, float]:
    """Geometric mean ratio, its 95% t interval and the paired t test's p (on logs)."""
    m, lo, hi = paired_ratio(ratios)
    p = paired_t(np.log(ratios), 0.95)[0] if len(ratios) > 1 else np.nan
    return {"n": len(ratios), "ratio": m, "lo": lo, "hi": hi, "p": float(p)}


def versus_default(dfs: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """Each set ÷ HTEX's default in its block, per workload (and the workflow's overhead)."""
    rows: list[dict[str, Any]] = []
    for wl, df in dfs.items():
        cols = ["us_per_task"] + (["overhead_s"] if df["overhead_s"].notna().any() else [])
        for col in cols:
            for s in sorted(set(df["set"]) - {"-"}):
                r = paired(df, "-", s, col)
                if len(r) > 1:
                    rows.append({"what": f"{wl} {col}", "set": s, **ratio_row(r)})
    return pd.DataFrame(rows)


def transfer(dfs: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """Each set's effect (÷ default, paired) on the workflow ÷ its effect on noop: 1 when the
    effect transfers unchanged (Welch t on the log ratios of the two workloads)."""
    (wa, a), (wb, b) = dfs.items()
    rows: list[dict[str, Any]] = []
    for s in sorted((set(a["set"]) & set(b["set"])) - {"-"}):
        la, lb = np.log(paired(a, "-", s)), np.log(paired(b, "-", s))
        if len(la) < 2 or len(lb) < 2:
            continue
        lo, hi = welch_ci(lb, la, 0.95)
        p = welch_p(lb, la)
        rows.append(
            {"what": f"{wb} effect ÷ {wa} effect", "set": s, "n": min(len(la), len(lb)),
             "ratio": float(np.exp(lb.mean() - la.mean())), "lo": float(np.exp(lo)),
             "hi": float(np.exp(hi)), "p": np.nan if p is None else p}
        )  # fmt: skip
    return pd.DataFrame(rows)


def noop_effects(dfs: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """NoopLogging on ÷ off at each prefetch level, paired within blocks."""
    rows: list[dict[str, Any]] = []
    for wl, df in dfs.items():
        for p in sorted(set(df["prefetch"])):
            off = "-" if p == 0 else f"cfg_prefetch={p}"
            on = ",".join(sorted(["cfg_noop_logging"] + ([off] if p else [])))
            r = paired(df, off, on)
            if len(r) > 1:
                rows.append({"what": f"{wl} NoopLogging", "set": f"prefetch {p}", **ratio_row(r)})
    return pd.DataFrame(rows)


def block_matrix(df: pd.DataFrame, sets: list[str]) -> np.ndarray:
    """Log µs per task, one row per block and one column per set (NaN where a run is
    missing or failed)."""
    w = df.pivot_table(index="block", columns="set", values="us_per_task", aggfunc="first")
    return np.log(w.reindex(columns=sets).to_numpy(float))


def tau_interval(a: pd.DataFrame, b: pd.DataFrame, n: int = 4000) -> dict[str, float]:
    """Kendall's tau of the sets' mean log µs per task, a percentile bootstrap interval
    (each workload's blocks resampled) and scipy's exact p (H0: independent rankings)."""
    sets = sorted(set(a["set"]) & set(b["set"]))
    ma, mb = block_matrix(a, sets), block_matrix(b, sets)
    rng = np.random.default_rng(0)
    tau, p = kendall_tau(np.nanmean(ma, 0), np.nanmean(mb, 0))
    boots = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a resample missing a set's every run: NaN, skipped
        for _ in range(n):
            ra = np.nanmean(ma[rng.integers(0, len(ma), len(ma))], 0)
            rb = np.nanmean(mb[rng.integers(0, len(mb), len(mb))], 0)
            boots.append(kendall_tau(ra, rb)[0])
    lo, hi = np.nanpercentile(boots, [2.5, 97.5])
    return {"tau": tau, "lo": float(lo), "hi": float(hi), "p": p}


def halves(df: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The runs of alternate blocks: two independent replications of one ranking."""
    blocks = sorted(set(df["block"]))
    first = set(blocks[::2])
    return df[df["block"].isin(first)], df[~df["block"].isin(first)]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("noop", help="noop campaign(s), comma-separated")
    ap.add_argument("workflow", help="workflow campaign(s), comma-separated")
    ap.add_argument("--store", default=".perflab/perflab.db")
    ap.add_argument("--run", action="store_true", help="run the pending runs first, alternately")
    ap.add_argument("--minutes", type=float, default=45.0, help="--run: stop starting after")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    store = Store(a.store)
    noop, wf = a.noop.split(","), a.workflow.split(",")
    if a.run:
        for pair in zip(noop, wf, strict=True):
            alternate(store, list(pair), time.time() + 60 * a.minutes)
    dfs = {"noop": frame(store, noop), "montage-1000": frame(store, wf)}
    sums = {k: summary(v) for k, v in dfs.items()}
    taus = {
        "noop vs montage-1000": tau_interval(dfs["noop"], dfs["montage-1000"]),
        "noop half vs half": tau_interval(*halves(dfs["noop"])),
        "montage half vs half": tau_interval(*halves(dfs["montage-1000"])),
    }
    fams = {"vs default": versus_default(dfs), "NoopLogging": noop_effects(dfs)}
    fams["transfer"] = transfer(dfs)
    for fam in fams.values():  # each family its own question, so Holm within it
        fam["p_holm"] = holm(fam["p"].fillna(1.0).to_numpy(float), 0.05)[0]
    tests = pd.concat(fams.values(), ignore_index=True)
    if a.json:
        print(json.dumps({"summary": {k: v.to_dict("records") for k, v in sums.items()},
                          "kendall_tau": taus, "tests": tests.to_dict("records")}))  # fmt: skip
        return
    for k, v in sums.items():
        print(f"\n{k}: wall µs per task by set (95% CI), fastest first")
        print(v.to_string(index=False, float_format=lambda x: f"{x:,.1f}"))
    print("\nKendall tau between rankings (bootstrap 95% over blocks; exact p vs independent):")
    for k, t in taus.items():
        print(f"  {k}: {t['tau']:.2f} ({t['lo']:.2f} to {t['hi']:.2f}), p={t['p']:.3g}")
    print("\nPaired ratios (geometric mean, 95% t CI), Holm within each family:")
    print(tests.to_string(index=False, float_format=lambda x: f"{x:.3g}"))


if __name__ == "__main__":
    main()
