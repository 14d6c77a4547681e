"""One self-contained report.html: figures inlined, no network request of any kind, every
user-supplied string escaped (jinja2 autoescape)."""

from __future__ import annotations

import json
import math
import time
from functools import partial
from pathlib import Path
from typing import Any

import jinja2
import pandas as pd

from perflab.analysis.data import Dataset
from perflab.analysis.reach import DEFAULT_TARGET, reach, run_seconds
from perflab.display import decimals, number
from perflab.files import atomic_write
from perflab.report.assemble import build
from perflab.report.interactive import write_interactive
from perflab.report.render import render_figures
from perflab.report.terminal import claim_text
from perflab.run.record import metric_unit

MAX_TABLE_ROWS = 1000

TEMPLATE = Path(__file__).with_name("template.html")


def write_report(
    ds: Dataset,
    runs: pd.DataFrame,
    out_dir: str | Path,
    title: str,
    without: list[str] | None = None,
    before_after: list[tuple[str, str | None]] | None = None,
    shared_hosts: dict[str, Any] | None = None,
    target: float | None = None,
    stopped: list[str] | None = None,
) -> Path:
    """Analyse, draw every figure, and write ``out_dir/report.html`` (+ figures/,
    analysis.json). ``before_after``: extra before/after scatters, each (factor, the factor
    to colour by or None); an unknown factor raises PerflabError before anything is written.
    ``shared_hosts``: the campaign's runs that overlapped on one host (``hostshare.summary``),
    kept in analysis.json and warned on the page. analysis.json's ``precision`` is the
    precision per hour (``reach``) against ``target`` (the campaign's ``--precision``; None:
    ``reach.DEFAULT_TARGET``), a run's cost the median gap between run starts; ``stopped``
    (the campaign's sets stopped early and why, ``Source.stopped``) goes with its lines."""
    t0 = time.perf_counter()
    out = Path(out_dir)
    ctx = build(ds, runs, without, before_after=before_after)
    a = ctx.analysis
    drawn, skipped = render_figures(ctx, out / "figures")
    factor, colour_by = before_after[0] if before_after else (None, None)
    page = write_interactive(ctx, out, factor, colour_by)
    interactive = {
        "href": page.name if page else None,
        "why_not": None
        if page
        else (
            "no factor has a measured pair of sets X, X+{t}"
            if ctx.deltas.empty
            else "the vl-convert-python package (Vega-Lite bundled for offline use) is not "
            "installed"
        ),
    }
    if shared_hosts is not None:
        a = {**a, "shared_hosts": shared_hosts}
    # beside the analysis contract, as shared_hosts: a run's wall time is the report's
    reached = reach(ds.y, ds.x, ds.factors, run_seconds(ds.t), target or DEFAULT_TARGET)
    if stopped:  # as campaign status says them: the same notes, the same words
        reached = {**reached, "stopped": stopped, "lines": [*reached["lines"], *stopped]}
    a = {**a, "precision": reached}
    (out / "analysis.json").write_text(json.dumps(a, default=float, indent=1))
    warn = [shared_hosts["warning"]] if shared_hosts and shared_hosts["warning"] else []
    if a["noise"]["noisy_sets"]:
        warn.append(
            f"{len(a['noise']['noisy_sets'])} treatment sets vary between replicates "
            "significantly more or less than the others (F test on log scale, Holm-corrected)."
        )
    if a["noise"].get("outliers"):
        warn.append(
            f"{len(a['noise']['outliers'])} runs are outliers within their set "
            "(studentised residual, Bonferroni)."
        )
    if a["dataset"]["dropped"]:
        warn.append(f"Factors never varied, left out: {', '.join(a['dataset']['dropped'])}.")
    if a["dataset"]["failed"]:
        warn.append(
            f"{a['dataset']['failed']} runs failed or timed out "
            "(in the run table, not in the analysis)."
        )
    top = sorted(
        (
            {"name": f, "effect": v["effect_us"]}
            for f, v in a["factors"].items()
            if v["effect_us"] is not None and v.get("significant", True)
        ),
        key=lambda r: r["effect"],
    )[:3]
    cols = [
        c
        for c in ("timestamp", "status", "us_per_task", "tasks_per_s", "utilization", "treatments")
        if c in runs.columns
    ]
    table = runs[cols].head(MAX_TABLE_ROWS).copy()
    for c in ("us_per_task", "tasks_per_s", "utilization"):
        if c in table:
            table[c] = table[c].map(lambda v: "" if pd.isna(v) else f"{v:,.2f}")
    env = jinja2.Environment(autoescape=True, undefined=jinja2.StrictUndefined)
    html = env.from_string(TEMPLATE.read_text()).render(
        title=title,
        a=a,
        top=top,
        warnings=warn,
        figures=drawn,
        skipped=skipped,
        interactive=interactive,
        factors=sorted(
            a["factors"].items(),
            key=lambda kv: math.inf if kv[1]["effect_us"] is None else kv[1]["effect_us"],
        ),
        runs=table.fillna("").to_dict("records"),
        n_runs=len(runs),
        run_columns=cols,
        claim_text=claim_text,
        num=partial(number, digits=decimals(a.get("best_us"))),  # the terminal's decimals
        unit=metric_unit(a["metric"]),  # the terminal's wording, from the same function
        numeric={"us_per_task", "tasks_per_s", "utilization"},
        seconds=time.perf_counter() - t0,
    )
    return atomic_write(out / "report.html", html)
