"""The zoo's scoreboard: per engine, METG(50%) and each DAG pattern's overhead vs ideal.

Input is a frame of zoo runs (one row per run: target, kind, task_us, tasks, wall_s, slots,
efficiency, tasks_per_s, latency_per_level_s, status); every figure is a mean over
replicates with a Student-t 95% interval.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from perflab.analysis.metg import metg
from perflab.analysis.sweeps import mean_ci
from perflab.errors import PerflabError

SUMMARY_COLUMNS = ("efficiency", "tasks_per_s", "latency_per_level_s", "wall_s", "ideal_s")
#: A workflow row's figures: makespan, its list-scheduled ideal, the difference, their
#: ratio, and the median / 90th-percentile queue delay of a task once it was ready.
WORKFLOW_COLUMNS = (
    "wall_s",
    "ideal_s",
    "overhead_s",
    "efficiency",
    "queue_delay_p50_s",
    "queue_delay_p90_s",
    "tasks",
)


def _summary(values: pd.Series) -> dict[str, Any] | None:
    v = values.dropna().to_numpy(dtype=float)
    if not len(v):
        return None
    est, lo, hi = mean_ci(v, floor=0.0)  # every zoo figure is a time, rate or ratio
    return {"estimate": est, "ci_low": lo, "ci_high": hi, "n": len(v)}


def zoo_table(
    runs: pd.DataFrame,
    threshold: float = 0.5,
    basis: str = "peak",
    limits: dict[str, str] | None = None,
) -> dict[str, Any]:
    """``{targets[], metg{target: {...}}, patterns{target: {kind: {metric: {...}}}},
    failed[]}`` from the zoo's runs; ``limits``: why each engine's METG search stopped."""
    if runs.empty:
        raise PerflabError("the zoo has no runs yet")
    ok = runs[runs["status"] == "ok"]
    failed = runs[runs["status"] != "ok"][["target", "kind", "task_us", "status", "error"]]
    out: dict[str, Any] = {
        "threshold": threshold,
        "basis": basis,
        "targets": sorted(runs["target"].unique()),
        "metg": {},
        "patterns": {},
        "workflows": {},
        "failed": failed.to_dict(orient="records"),
    }
    for target, g in ok.groupby("target"):
        sweep = g[g["kind"] == "metg"]
        if sweep["task_us"].nunique() >= 2:
            limit = (limits or {}).get(str(target))
            out["metg"][target] = metg(sweep, threshold, basis, limit)
        cells: dict[str, Any] = {}
        for kind, k in g[~g["kind"].isin(["metg", "wfcommons"])].groupby("kind"):
            cells[str(kind)] = {c: _summary(k[c]) for c in SUMMARY_COLUMNS if c in k}
        out["patterns"][target] = cells
        out["workflows"][target] = _workflows(g[g["kind"] == "wfcommons"])
    return out


def _workflows(runs: pd.DataFrame) -> dict[str, Any]:
    """``{"montage-1000": {"recipe", "size", metric: summary}}`` for one engine."""
    cells: dict[str, Any] = {}
    if "recipe" not in runs or runs.empty:
        return cells
    for key, w in runs.groupby(["recipe", "size"]):
        recipe, size = str(key[0]), int(key[1])  # type: ignore[call-overload]
        cell: dict[str, Any] = {"recipe": recipe, "size": size}
        cell.update({c: _summary(pd.to_numeric(w[c])) for c in WORKFLOW_COLUMNS})
        cells[f"{recipe}-{size}"] = cell
    return cells


def workflow_rows(table: dict[str, Any]) -> list[dict[str, Any]]:
    """One flat row per engine, recipe and size (for printing and the page)."""
    rows = []
    for target, cells in table.get("workflows", {}).items():
        for key, cell in sorted(cells.items(), key=lambda kv: (kv[1]["recipe"], kv[1]["size"])):
            row: dict[str, Any] = {"target": target, "workflow": key, **{
                k: cell[k] for k in ("recipe", "size")}}  # fmt: skip
            for c in WORKFLOW_COLUMNS:
                s = cell.get(c)
                row[c] = s and s["estimate"]
                row[f"{c}_ci"] = s and [s["ci_low"], s["ci_high"]]
            rows.append(row)
    return rows


def rows_for_table(table: dict[str, Any]) -> list[dict[str, Any]]:
    """One flat row per engine: METG and each pattern's headline figures (for printing)."""
    rows = []
    for t in table["targets"]:
        m = table["metg"].get(t) or {}
        row: dict[str, Any] = {
            "target": t,
            "metg_us": m.get("metg_us"),
            "metg_ci": [m.get("ci_low"), m.get("ci_high")],
            "metg_status": m.get("status"),
            "metg_limit": m.get("limit"),
            "max_efficiency": m.get("max_efficiency"),
        }
        for kind, cell in table["patterns"].get(t, {}).items():
            for metric in ("efficiency", "tasks_per_s", "latency_per_level_s", "wall_s"):
                s = cell.get(metric)
                row[f"{kind}.{metric}"] = s and s["estimate"]
                row[f"{kind}.{metric}_ci"] = s and [s["ci_low"], s["ci_high"]]
            ideal = cell.get("ideal_s")
            row[f"{kind}.ideal_s"] = ideal and ideal["estimate"]
        rows.append(row)
    return rows


def finite(x: Any) -> bool:
    return x is not None and bool(np.isfinite(x))
