"""The seed's question: which of the logger calls `src_submit_biglogs_remove` removes carry
its saving, and do the per-line costs add up to the grouped effect?

    # one factor per call; keep those of the group
    perflab factors generate log-calls --package parsl --module parsl.dataflow.dflow -o calls.toml
    python bench/log_lines_screen.py select calls.toml -o lines.toml        # prints the names
    # screen: Plackett-Burman over the 13 line factors
    perflab campaign create lines_screen --catalog lines.toml --factors "$(cat lines.names)" \
        --design fractional --design-opt plackett_burman=1 --runs 4 -n 2000
    perflab campaign run lines_screen && perflab export lines_screen -o screen.csv
    python bench/log_lines_screen.py screen screen.csv [more.csv …] --names lines.names
    # focus: base, the grouped factor, all lines together, each survivor alone (explicit sets)
    python bench/log_lines_screen.py focus-sets --names lines.names --survivors A,B -o focus.txt
    perflab campaign create lines_focus --catalog lines.toml \
        --factors "src_submit_biglogs_remove,$(cat lines.names)" --design explicit \
        --design-opt file=focus.txt --runs 8 -n 2000
    perflab campaign run lines_focus && perflab export lines_focus -o focus.csv
    python bench/log_lines_screen.py focus focus.csv --names lines.names

Effects are on the log of the metric (wall and CPU time per task), reported as the ratio
"line removed / kept" with a 95 % CI; screen p-values Holm-adjusted over the lines. The
additivity check: the sum of the 13 line coefficients (a contrast of the screen's OLS, with
its own CI) against the grouped factor's effect measured in the focus campaign, and against
"all 13 lines removed" there (the same code change made of 13 factors).
"""

from __future__ import annotations

import argparse
import json
import math
import tomllib
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import statsmodels.formula.api as smf

from perflab.analysis.stats import holm, t_ppf

GROUP = "src_submit_biglogs_remove"
METRICS = ("us_per_task", "cpu_us_per_task")


def select(calls: Path, out: Path) -> list[str]:
    """The generated factors that remove a call of GROUP (they conflict with it)."""
    table = tomllib.loads(calls.read_text())["factor"]
    names = [n for n, t in table.items() if GROUP in t.get("conflicts", [])]
    lines = []
    for n in names:
        t = table[n]
        tr = t["transform"]
        lines += [
            f"[factor.{n}]",
            f"description = {json.dumps(t.get('description', ''))}",
            'category = "source_remove"',
            'targets = ["parsl-htex", "parsl-threads"]',
            "transform = { "
            + ", ".join(f"{k} = {json.dumps(v)}" for k, v in tr.items() if k != "factor")
            + " }",
            f"conflicts = {json.dumps([GROUP])}",
            "",
        ]
    out.write_text("\n".join(lines))
    out.with_suffix(".names").write_text(",".join(names))
    return names


#: ``NAME=OTHER``: NAME's call was also removed by OTHER in these runs (a catalog written
#: before the generator's ``exclude``: the second of two launch calls, whose literals the
#: first also holds, removed both), so NAME's column is NAME or OTHER.
RECODE: dict[str, str] = {}


def _frame(csv: Path | list[Path], names: list[str]) -> pd.DataFrame:
    """The ok runs of one or more exported campaigns (replicates of one design)."""
    paths = csv if isinstance(csv, list) else [csv]
    df = pd.concat([pd.read_csv(p, sep=";") for p in paths], ignore_index=True)
    for name, other in RECODE.items():
        df[name] = df[name].astype(bool) | df[other].astype(bool)
    df = df[df["status"] == "ok"].copy()
    if "cpu_us_per_task" not in df and {"cpu_user_s", "cpu_sys_s", "tasks"} <= set(df):
        df["cpu_us_per_task"] = (df.cpu_user_s + df.cpu_sys_s) / df.tasks * 1e6
    short = {n: f"x{i}" for i, n in enumerate(names)}
    for n in names:
        df[short[n]] = df[n].astype(int) if n in df else 0
    return df


def _ratio(coef: float, se: float, df_resid: float) -> dict[str, float]:
    q = float(t_ppf(0.975, df_resid))
    return {"ratio": math.exp(coef), "ci_low": math.exp(coef - q * se),
            "ci_high": math.exp(coef + q * se)}  # fmt: skip


def screen(csv: Path | list[Path], names: list[str]) -> dict[str, Any]:
    """Main effects of each line (OLS on log metric), Holm-adjusted, and their sum."""
    df = _frame(csv, names)
    xs = [f"x{i}" for i in range(len(names))]
    out: dict[str, Any] = {"runs": len(df), "lines": {}, "sum": {}}
    for metric in METRICS:
        fit = smf.ols(f"np.log({metric}) ~ " + " + ".join(xs), data=df).fit()
        p_holm = holm(np.array([fit.pvalues[x] for x in xs]), 0.05)[0]
        for n, x, p in zip(names, xs, p_holm, strict=True):
            row = _ratio(fit.params[x], fit.bse[x], fit.df_resid)
            row.update(p_holm=float(p))
            out["lines"].setdefault(n, {})[metric] = row
        c = np.zeros(len(fit.params))
        for x in xs:
            c[list(fit.params.index).index(x)] = 1.0
        t = fit.t_test(c)
        out["sum"][metric] = _ratio(float(t.effect[0]), float(t.sd[0][0]), fit.df_resid)
        out["sum"][metric]["sd_log_resid"] = float(np.sqrt(fit.scale))
    return out


def focus(csv: Path, names: list[str]) -> dict[str, Any]:
    """Each treatment set of the focus campaign against the untreated runs (OLS on log
    metric with one indicator per set; the base is the intercept)."""
    df = _frame(csv, names)
    cols = [c for c in [GROUP, *names] if c in df]
    df["set"] = df[cols].apply(lambda r: ",".join(c for c in cols if r[c]) or "base", axis=1)
    out: dict[str, Any] = {"runs": len(df), "sets": {}}
    for metric in METRICS:
        fit = smf.ols(f"np.log({metric}) ~ C(set, Treatment('base'))", data=df).fit()
        for term in fit.params.index[1:]:
            label = term.split("[T.")[1].rstrip("]")
            if label.count(",") == len(names) - 1:
                label = "all lines"
            row = _ratio(fit.params[term], fit.bse[term], fit.df_resid)
            row["n"] = int((df["set"] == term.split("[T.")[1].rstrip("]")).sum())
            out["sets"].setdefault(label, {})[metric] = row
    return out


def figure(screen_json: Path, focus_json: Path | None, names: list[str], out: Path) -> None:
    """Forest plot: each line's ratio (screen), their sum, and the focus campaign's grouped
    factor and all-lines set, per metric."""
    from plotnine import (
        aes,
        coord_flip,
        facet_wrap,
        geom_errorbar,
        geom_hline,
        geom_point,
        ggplot,
        labs,
        theme_bw,
    )

    sc = json.loads(screen_json.read_text())
    rows = []
    for n, per in sc["lines"].items():
        for m, r in per.items():
            rows.append({"what": n.removeprefix("log_dflow_dataflowkernel_")[:48], "metric": m,
                         "kind": "line (screen)", **r})  # fmt: skip
    for m, r in sc["sum"].items():
        rows.append({"what": "sum of the 13 lines (screen)", "metric": m, "kind": "sum", **r})
    if focus_json is not None:
        fo = json.loads(focus_json.read_text())
        for label, per in fo["sets"].items():
            if label in (GROUP, "all lines"):
                for m, r in per.items():
                    rows.append({"what": f"{label} (focus)", "metric": m, "kind": "whole", **r})
    df = pd.DataFrame(rows)
    df["what"] = pd.Categorical(df["what"], list(dict.fromkeys(df["what"]))[::-1])
    p = (
        ggplot(df, aes("what", "ratio", colour="kind"))
        + geom_hline(yintercept=1.0, linetype="dashed", colour="#888888")
        + geom_errorbar(aes(ymin="ci_low", ymax="ci_high"), width=0.3)
        + geom_point(size=2)
        + coord_flip()
        + facet_wrap("~metric", scales="free_x")
        + theme_bw()
        + labs(x="", y="removed / kept (95% CI)",
               title="Per-line cost of the submit-side logger calls, HTEX noop")
    )  # fmt: skip
    for ext in ("png", "svg"):
        p.save(out.with_suffix(f".{ext}"), width=10, height=6, dpi=120, verbose=False)


def focus_sets(names: list[str], survivors: list[str]) -> str:
    rows = ["-  # base", GROUP, ",".join(names) + "  # all lines: the group made of 13 factors"]
    rows += survivors
    return "\n".join(rows) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("step", choices=["select", "screen", "focus-sets", "focus", "figure"])
    ap.add_argument("path", nargs="*", type=Path)
    ap.add_argument("--names", type=Path)
    ap.add_argument("--survivors", default="")
    ap.add_argument("--focus-json", type=Path)
    ap.add_argument("--recode-or", action="append", default=[], metavar="NAME=OTHER")
    ap.add_argument("-o", "--output", type=Path)
    args = ap.parse_args()
    names = args.names.read_text().strip().split(",") if args.names else []
    RECODE.update(dict(r.split("=", 1) for r in args.recode_or))
    if args.step == "select":
        print(",".join(select(args.path[0], args.output)))
    elif args.step == "screen":
        print(json.dumps(screen(args.path, names), indent=1))  # replicates: several CSVs
    elif args.step == "figure":
        figure(args.path[0], args.focus_json, names, args.output)
    elif args.step == "focus-sets":
        args.output.write_text(focus_sets(names, [s for s in args.survivors.split(",") if s]))
    else:
        print(json.dumps(focus(args.path[0], names), indent=1))


if __name__ == "__main__":
    main()
