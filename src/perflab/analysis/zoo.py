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
        "absent": absent(runs),
    }
    for target, g in ok.groupby("target"):
        sweep = g[g["kind"] == "metg"]
        planned = runs[(runs["target"] == target) & (runs["kind"] == "metg")]["task_us"]
        # the "largest" basis divides by the largest size's efficiency: with that size
        # failed, a smaller one would stand in for it unsaid (absent says why)
        lost_top = basis == "largest" and len(sweep) and sweep["task_us"].max() < planned.max()
        if sweep["task_us"].nunique() >= 2 and not lost_top:
            limit = (limits or {}).get(str(target))
            out["metg"][target] = metg(sweep, threshold, basis, limit)
        cells: dict[str, Any] = {}
        for kind, k in g[~g["kind"].isin(["metg", "wfcommons"])].groupby("kind"):
            cells[str(kind)] = {c: _summary(k[c]) for c in SUMMARY_COLUMNS if c in k}
        out["patterns"][target] = cells
        out["workflows"][target] = _workflows(g[g["kind"] == "wfcommons"])
    return out


def absent(runs: pd.DataFrame) -> list[dict[str, Any]]:
    """Each measurement (engine and kind; a METG task size; a workflow) none of whose runs
    succeeded: it has no figure, and this says why (its runs' last error)."""
    keys = ["target", "kind", "task_us"]
    frame = runs.assign(task_us=runs["task_us"].where(runs["kind"] == "metg", 0.0))
    out = []
    for key, g in frame.groupby(keys, sort=True):
        if (g["status"] == "ok").any():
            continue
        target, kind, task_us = key
        errors = [e for e in g["error"] if e]
        out.append(
            {
                "target": str(target),
                "kind": str(kind),
                "task_us": float(str(task_us)) if kind == "metg" else None,
                "runs": len(g),
                "cause": errors[-1] if errors else str(g["status"].iloc[-1]),
            }
        )
    return out


def absent_text(a: dict[str, Any]) -> str:
    """One absent measurement as the user reads it."""
    what = f"{a['target']} {a['kind']}" + (f" at {a['task_us']:g} µs" if a["task_us"] else "")
    return f"{what}: failed in {a['runs']} of {a['runs']} runs: {a['cause']}"


def unanswered(table: dict[str, Any]) -> str | None:
    """Why the zoo's scoreboard is not whole (None: it is): every run failed, or some
    measurements have no figure. The verb shows what was measured, then exits 1 with this."""
    gone = table.get("absent") or []
    if not gone:
        return None
    measured = bool(table["metg"]) or any(table["patterns"].values())
    measured = measured or any(table.get("workflows", {}).values())
    head = "no figure at all" if not measured else f"{len(gone)} measurement(s) have no figure"
    return f"{head}: " + "; ".join(absent_text(a) for a in gone[:5]) + (
        f"; and {len(gone) - 5} more" if len(gone) > 5 else "")  # fmt: skip


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
