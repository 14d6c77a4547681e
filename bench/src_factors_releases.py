"""Source factors across Parsl releases: each factor against its release's base, on real HTEX.

    python bench/src_factors_releases.py --check                      # what applies where
    python bench/src_factors_releases.py -o docs/transforms/releases   # measure (ABBA pairs)

For every release (each in perflab's cached private venv) and factor, one fixed-length
`compare` (``run_compare``: A = the release as it ships, B = the release with the factor's
transform; ABBA order, ``--pairs`` runs per side). From the same runs, the ratio B/A of wall
time per task and of CPU time per task: geometric mean of the paired ratios with a 95 %
t-interval on their logs. The load average is recorded around each comparison: the machine
is shared, so a ratio is only as good as its interleaving.

Writes ``rows.jsonl`` (one line per release x factor, with every run's values), ``table.md``
and ``src_factors_releases.png|svg``.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from perflab.analysis.stats import paired_t
from perflab.compare.gate import Side, metric_value, run_compare
from perflab.errors import PerflabError
from perflab.factors.catalog import load_catalogs
from perflab.factors.sources import locate
from perflab.factors.transforms import parse_transform
from perflab.factors.treat import treat
from perflab.prepare import prepare
from perflab.prepare.transformed import apply_to_tree
from perflab.spec import RunSpec

RELEASES = ["2024.12.2", "2025.12.1", "2026.6.1", "2026.10.26"]
FACTORS = ["src_submit_biglogs_remove", "src_lazy_logs"]
METRICS = ("us_per_task", "cpu_us_per_task")
LABELS = {"us_per_task": "wall time per task", "cpu_us_per_task": "CPU time per task"}


def base_spec(release: str, tasks: int) -> RunSpec:
    spec = RunSpec(
        target="parsl-htex", workload="noop", tasks=tasks, packages=[f"parsl=={release}"]
    )
    return prepare(spec).spec


def applicability(release: str, factor: str, python: str) -> dict[str, Any]:
    """How many calls the factor changes in this release, and which selectors find nothing."""
    cat = load_catalogs()
    items = [
        (factor, parse_transform({k: v for k, v in e.items() if k != "factor"}, factor))
        for e in cat.get(factor).effects["transform"]
    ]
    pkg, version = locate("parsl", python)
    try:
        _, report = apply_to_tree(pkg, "parsl", version, items)
    except PerflabError as exc:
        return {"applies": False, "why": str(exc)}
    return {
        "applies": True,
        "changed": sum(r["total"] for r in report),
        "unmatched": sorted({u for r in report for u in r.get("unmatched", [])}),
    }


def paired_ratio(a: list[float], b: list[float]) -> dict[str, float]:
    """Geometric mean of b_i/a_i with a 95 % t-interval on the log ratios."""
    logs = [math.log(y / x) for x, y in zip(a, b, strict=False) if x > 0 and y > 0]
    if len(logs) < 2:  # every pair lost (the failures are in the row's causes)
        return {"ratio": math.nan, "ci_low": math.nan, "ci_high": math.nan, "p": math.nan,
                "pairs": len(logs)}  # fmt: skip
    m = statistics.fmean(logs)
    p, lo, hi = paired_t(np.asarray(logs), 0.95)
    return {"ratio": math.exp(m), "ci_low": math.exp(lo), "ci_high": math.exp(hi),
            "p": p, "pairs": len(logs)}  # fmt: skip


def measure_one(release: str, factor: str, pairs: int, tasks: int) -> dict[str, Any]:
    """``pairs`` complete ABBA pairs; a comparison that a failed run ends (an old release's
    worker pool can miss the interchange under load) is resumed with a fresh one, and the
    failure's cause kept."""
    a_spec = base_spec(release, tasks)
    b_spec = treat(base_spec(release, tasks), factor, load_catalogs())
    load0 = os.getloadavg()[0]
    t0 = time.monotonic()
    got: list[tuple[Any, Any]] = []
    causes: list[str] = []
    for _ in range(3 * pairs):
        if len(got) >= pairs:
            break
        a, b = Side("A", a_spec), Side("B", b_spec)
        k = max(2, pairs - len(got))
        run_compare(a, b, "us_per_task", n_min=k, n_max=k, sequential=False)
        for ra, rb in zip(a.records, b.records, strict=False):
            if ra.status == "ok" and rb.status == "ok":
                got.append((ra, rb))
        for r in a.records + b.records:
            if r.status != "ok":
                causes.append(((r.error or "").strip().splitlines() or ["?"])[-1])
    got = got[:pairs]
    row: dict[str, Any] = {"release": release, "factor": factor, "tasks": tasks,
                           "load_before": load0, "load_after": os.getloadavg()[0],
                           "elapsed_s": time.monotonic() - t0, "failed": len(causes),
                           "causes": causes}  # fmt: skip
    for metric in METRICS:
        va = [metric_value(ra, metric) or math.nan for ra, _ in got]
        vb = [metric_value(rb, metric) or math.nan for _, rb in got]
        row[metric] = paired_ratio(va, vb)
        row[metric]["a"], row[metric]["b"] = va, vb
    changed = [rb.measurement.get("transformed") for _, rb in got if rb.measurement]
    row["transformed"] = changed[0] if changed else None
    return row


def figure(rows: list[dict[str, Any]], out: Path) -> None:
    import pandas as pd
    from plotnine import (
        aes,
        element_text,
        facet_wrap,
        geom_errorbar,
        geom_hline,
        geom_point,
        ggplot,
        labs,
        position_dodge,
        theme,
        theme_bw,
    )

    flat = [
        {"release": r["release"], "factor": r["factor"], "metric": LABELS[m],
         "ratio": r[m]["ratio"], "lo": r[m]["ci_low"], "hi": r[m]["ci_high"]}
        for r in rows for m in METRICS
    ]  # fmt: skip
    df = pd.DataFrame(flat)
    df["release"] = pd.Categorical(df["release"], [r for r in RELEASES if r in set(df.release)])
    dodge = position_dodge(width=0.4)
    p = (
        ggplot(df, aes("release", "ratio", colour="factor"))
        + geom_hline(yintercept=1.0, linetype="dashed", colour="#888888")
        + geom_errorbar(aes(ymin="lo", ymax="hi"), width=0.25, position=dodge)
        + geom_point(size=2.5, position=dodge)
        + facet_wrap("~metric")
        + theme_bw()
        + theme(axis_text_x=element_text(rotation=30, ha="right"), legend_position="bottom")
        + labs(x="Parsl release", y="treated / base (geometric mean, 95% CI)",
               title="Source factors per Parsl release, HTEX noop (below 1: faster)")
    )  # fmt: skip
    for ext in ("png", "svg"):
        p.save(out / f"src_factors_releases.{ext}", width=9, height=4.5, dpi=120, verbose=False)


def table(rows: list[dict[str, Any]]) -> str:
    lines = [
        "| release | factor | calls changed | wall/task B/A (95% CI) | CPU/task B/A (95% CI) "
        "| pairs | load |",
        "|---|---|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        cells = [
            f"{r[m]['ratio']:.3f} ({r[m]['ci_low']:.3f}–{r[m]['ci_high']:.3f})" for m in METRICS
        ]
        n = r.get("applicability", {}).get("changed", "")
        lines.append(
            f"| {r['release']} | {r['factor']} | {n} | {cells[0]} | {cells[1]} | "
            f"{r['us_per_task']['pairs']} | {r['load_before']:.1f}→{r['load_after']:.1f} |"
        )
    return "\n".join(lines) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--releases", default=",".join(RELEASES))
    ap.add_argument("--factors", default=",".join(FACTORS))
    ap.add_argument("--pairs", type=int, default=10)
    ap.add_argument("--tasks", type=int, default=1000)
    ap.add_argument("--check", action="store_true", help="only say what applies where")
    ap.add_argument("--render", action="store_true", help="table and figure of rows.jsonl")
    ap.add_argument("-o", "--output", type=Path, default=Path("src_factors_releases"))
    args = ap.parse_args()
    releases, factors = args.releases.split(","), args.factors.split(",")
    if args.check:
        for rel in releases:
            python = str(base_spec(rel, 10).python)
            for f in factors:
                print(rel, f, json.dumps(applicability(rel, f, python)), flush=True)
        return
    if args.render:  # every row measured into this folder so far, in release order
        rows = [json.loads(x) for x in (args.output / "rows.jsonl").read_text().splitlines()]
        # the last measurement of each release x factor (an earlier one cut short by failed
        # runs stays in rows.jsonl with its causes)
        last = {(r["release"], r["factor"]): r for r in rows if r["us_per_task"]["pairs"] >= 2}
        rows = list(last.values())
        rows.sort(key=lambda r: (releases.index(r["release"]), factors.index(r["factor"])))
        (args.output / "table.md").write_text(table(rows))
        figure(rows, args.output)
        sys.stdout.write(table(rows))
        return
    args.output.mkdir(parents=True, exist_ok=True)
    rows = []
    with open(args.output / "rows.jsonl", "a") as fh:
        for rel in releases:
            for f in factors:
                app = applicability(rel, f, str(base_spec(rel, 10).python))
                if not app["applies"]:
                    print(f"{rel} {f}: does not apply: {app['why']}", flush=True)
                    continue
                row = measure_one(rel, f, args.pairs, args.tasks)
                row["applicability"] = app
                rows.append(row)
                fh.write(json.dumps(row) + "\n")
                fh.flush()
                w, c = row["us_per_task"], row["cpu_us_per_task"]
                print(f"{rel} {f}: wall {w['ratio']:.3f} [{w['ci_low']:.3f}, {w['ci_high']:.3f}]"
                      f" cpu {c['ratio']:.3f} [{c['ci_low']:.3f}, {c['ci_high']:.3f}]"
                      f" failed {row['failed']} load {row['load_before']:.1f}",
                      flush=True)  # fmt: skip
    (args.output / "table.md").write_text(table(rows))
    figure(rows, args.output)
    sys.stdout.write(table(rows))


if __name__ == "__main__":
    main()
