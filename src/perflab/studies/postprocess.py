"""The post-processing study: sweep each parameter of the postprocess benchmark, both policies.

Every point is a real run (``perflab.run.measure``) of the ``postprocess`` workload; each run
record carries the SimPy model's prediction from that run's own measured latencies.  Points
are appended to ``points.jsonl`` in the output directory as they finish, so an interrupted
study resumes where it stopped.
"""

from __future__ import annotations

import json
import statistics
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from perflab.analysis.stats import bootstrap_ci, mean_ci
from perflab.errors import PerflabError
from perflab.files import output_dir
from perflab.workloads.postprocess_model import POLICIES

#: The original base point (max tasks, concurrency, task time, post-process time) at scale 1.
SEED_BASE = {"tasks": 100, "concurrency": 5, "task_s": 1.0, "pp_s": 1.0}
#: Each chart's levels, as multiples of the base value.
LEVELS = {
    "tasks": (0.25, 0.5, 1.0, 2.0),
    "concurrency": (0.4, 1.0, 2.0),
    "task_s": (0.5, 1.0, 2.0, 4.0, 8.0),
    "pp_s": (0.0, 0.1, 0.25, 0.5, 1.0),
}
CHARTS = tuple(LEVELS)


@dataclass(frozen=True)
class Point:
    engine: str
    chart: str
    tasks: int
    concurrency: int
    task_s: float
    pp_s: float
    policy: str
    rep: int
    #: The base point every chart passes through (JSON), so a partial study knows it.
    base: str = ""

    def key(self) -> str:
        return json.dumps(
            [
                self.engine,
                self.tasks,
                self.concurrency,
                self.task_s,
                self.pp_s,
                self.policy,
                self.rep,
            ]
        )


MAX_SCALE = 100.0
MAX_REPS = 1000


def design(
    engines: list[str], scale: float, reps: int, tasks: int = 100, base_only: bool = False
) -> list[Point]:
    """Every run of the study: one-at-a-time sweeps around the scaled base point.

    ``scale`` multiplies the base times (1.0: the original study's 1 s base).  Points shared by
    charts (the base) run once and serve every chart; ``base_only`` keeps only those.
    """
    # a scale past 100 makes runs of hours (and times past what a clock holds)
    if not 0 < scale <= MAX_SCALE or not 1 <= reps <= MAX_REPS or tasks < 1:
        raise PerflabError(
            f"study: --scale must be > 0 and at most {MAX_SCALE:g}, --runs 1 to {MAX_REPS}, "
            "--tasks at least 1"
        )
    base = {**SEED_BASE, "tasks": tasks}
    base["task_s"] *= scale
    base["pp_s"] *= scale
    out: dict[str, Point] = {}
    for rep in range(reps):
        for chart in CHARTS:
            for mult in (1.0,) if base_only else LEVELS[chart]:
                vals = dict(base)
                value = base[chart] * mult
                vals[chart] = max(1, round(value)) if chart in ("tasks", "concurrency") else value
                for engine in engines:
                    for policy in POLICIES:
                        p = Point(
                            engine,
                            chart,
                            int(vals["tasks"]),
                            int(vals["concurrency"]),
                            round(float(vals["task_s"]), 6),
                            round(float(vals["pp_s"]), 6),
                            policy,
                            rep,
                            json.dumps(base, sort_keys=True),
                        )
                        out.setdefault(p.key(), p)
    return list(out.values())


def _spec(p: Point, timeout_s: float) -> Any:
    from perflab.spec import RunSpec

    return RunSpec(
        target=p.engine,
        workload="postprocess",
        tasks=p.tasks,
        warmup=p.concurrency,
        params={
            "concurrency": p.concurrency,
            "task_s": p.task_s,
            "pp_s": p.pp_s,
            "policy": p.policy,
        },
        engine_options={"workers": p.concurrency},
        timeout_s=timeout_s,
    )


def run_study(points: list[Point], out: Path, progress: Callable[[str], None] = print) -> Path:
    """Measure every point not yet in ``out/points.jsonl``; returns that file."""
    from perflab.run.measure import measure, validate

    output_dir(out, "-o")
    path = out / "points.jsonl"
    done = {json.loads(line)["key"] for line in _lines(path)}
    todo = [p for p in points if p.key() not in done]
    for p in todo:
        validate(_spec(p, 600.0))
    for i, p in enumerate(todo):
        # Long enough for the slowest policy with room for a loaded machine.
        budget = 120.0 + 4 * (p.tasks * (p.task_s / p.concurrency + p.pp_s))
        rec = measure(_spec(p, budget))
        row = {
            "key": p.key(),
            **p.__dict__,
            "status": rec.status,
            "error": rec.error,
            "makespan_s": rec.wall_s,
            **rec.measurement.get("workload", {}),
        }
        with path.open("a") as fh:
            fh.write(json.dumps(row) + "\n")
        progress(
            f"[{i + 1}/{len(todo)}] {p.engine} {p.chart} {p.policy} "
            f"n={p.tasks} c={p.concurrency} t={p.task_s} pp={p.pp_s}: "
            f"{rec.status} {rec.wall_s}"
        )
    return path


def _lines(path: Path) -> Iterator[str]:
    if path.exists():
        yield from (line for line in path.read_text().splitlines() if line.strip())


def load(path: Path) -> list[dict[str, Any]]:
    """The study's rows (one per run)."""
    return [json.loads(line) for line in _lines(path)]


def summarize(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per (engine, chart, level, policy): measured mean with CI, model mean."""
    base = _base_of(rows)
    groups: dict[tuple[Any, ...], list[dict[str, Any]]] = {}
    for r in rows:
        if r["status"] != "ok":
            continue
        for chart in CHARTS:
            if all(r[k] == base[k] for k in CHARTS if k != chart):
                key = (r["engine"], chart, r[chart], r["policy"])
                groups.setdefault(key, []).append(r)
    out = []
    for (engine, chart, level, policy), rs in sorted(groups.items()):
        m, lo, hi = mean_ci([r["makespan_s"] for r in rs])
        models = {
            pol: statistics.fmean(r["model_by_policy"][pol] for r in rs)
            for pol in rs[0]["model_by_policy"]
        }
        out.append(
            {
                "engine": engine,
                "chart": chart,
                "level": level,
                "policy": policy,
                "n": len(rs),
                "mean_s": m,
                "ci_low": lo,
                "ci_high": hi,
                "model_s": models[policy],
                "models": models,
            }
        )
    return out


def _base_of(rows: list[dict[str, Any]]) -> dict[str, Any]:
    bases = {r["base"] for r in rows}
    if len(bases) != 1:
        raise PerflabError(f"study mixes {len(bases)} base points; use one directory per base")
    base: dict[str, Any] = json.loads(bases.pop())
    base["task_s"], base["pp_s"] = round(base["task_s"], 6), round(base["pp_s"], 6)
    return base


def error_spread(errs: list[float]) -> dict[str, Any]:
    """Median, 5-95 % range, mean absolute value, the largest in magnitude and the share within
    10 % of relative errors."""
    errs = sorted(errs)
    q = statistics.quantiles(errs, n=20) if len(errs) > 1 else [errs[0]] * 19
    return {
        "runs": len(errs),
        "median": statistics.median(errs),
        "p5": q[0],
        "p95": q[-1],
        "mean_abs": statistics.fmean(abs(e) for e in errs),
        "worst": max(errs, key=abs),
        "within_10pct": sum(abs(e) <= 0.10 for e in errs) / len(errs),
    }


def point_errors(rows: list[dict[str, Any]]) -> list[float]:
    """The model's relative error at each distinct point (policy and parameters): the mean
    prediction over the point's runs against their mean makespan."""
    groups: dict[tuple[Any, ...], list[dict[str, Any]]] = {}
    for r in rows:
        groups.setdefault((r["policy"], *(r[k] for k in CHARTS)), []).append(r)
    return [
        statistics.fmean(r["model_makespan_s"] for r in rs)
        / statistics.fmean(r["makespan_s"] for r in rs)
        - 1.0
        for rs in groups.values()
    ]


def model_errors(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Distribution of the model's relative error over every ok run, per engine, per policy
    within it (``by_policy``), and over the distinct points (``by_point``)."""
    out: dict[str, Any] = {}
    for engine in sorted({r["engine"] for r in rows}):
        ok = [r for r in rows if r["engine"] == engine and r["status"] == "ok"]
        if not ok:
            continue
        out[engine] = {
            **error_spread([r["model_error"] for r in ok]),
            "by_point": error_spread(point_errors(ok)),
            "by_policy": {
                pol: error_spread([r["model_error"] for r in ok if r["policy"] == pol])
                for pol in POLICIES
                if any(r["policy"] == pol for r in ok)
            },
        }
    return out


def gain(rows: list[dict[str, Any]]) -> dict[str, Any] | None:
    """drain-many's relative gain over retrieve-one (1 - mean ratio) among ``rows`` (one
    point), with a 95% percentile-bootstrap interval; the model's gain beside it."""
    import numpy as np

    one = [r["makespan_s"] for r in rows if r["policy"] == "retrieve-one"]
    many = [r["makespan_s"] for r in rows if r["policy"] == "drain-many"]
    if not one or not many:
        return None
    lo: float | None = None
    hi: float | None = None
    if len(one) >= 2 and len(many) >= 2:
        lo, hi = bootstrap_ci(
            (np.array(one), np.array(many)),
            lambda a, b, axis=-1: 1 - np.mean(b, axis=axis) / np.mean(a, axis=axis),
            n_resamples=2000,
            method="percentile",
            random_state=0,
        )
    models = {
        pol: statistics.fmean(r["model_by_policy"][pol] for r in rows)
        for pol in rows[0]["model_by_policy"]
    }
    return {
        "retrieve_one_s": statistics.fmean(one),
        "drain_many_s": statistics.fmean(many),
        "runs": [len(one), len(many)],
        "gain": 1 - statistics.fmean(many) / statistics.fmean(one),
        "gain_ci": [lo, hi],
        "model_s": models,
        "model_gain": 1 - models["drain-many"] / models["retrieve-one"],
    }


def _ok(rows: list[dict[str, Any]], engine: str) -> list[dict[str, Any]]:
    return [r for r in rows if r["engine"] == engine and r["status"] == "ok"]


def gain_at_base(rows: list[dict[str, Any]], engine: str) -> dict[str, Any] | None:
    """drain-many's gain at the base point (see ``gain``)."""
    base = _base_of(rows)
    at = [r for r in _ok(rows, engine) if all(r[k] == base[k] for k in CHARTS)]
    g = gain(at)
    return None if g is None else {"engine": engine, "base": base, **g}


def gain_series(rows: list[dict[str, Any]], engine: str) -> dict[str, list[dict[str, Any]]]:
    """drain-many's gain at every level of every chart (the original conclusions, measured)."""
    base = _base_of(rows)
    out: dict[str, list[dict[str, Any]]] = {}
    for chart in CHARTS:
        on = [r for r in _ok(rows, engine) if all(r[k] == base[k] for k in CHARTS if k != chart)]
        for level in sorted({r[chart] for r in on}):
            g = gain([r for r in on if r[chart] == level])
            if g is not None:
                out.setdefault(chart, []).append({"level": level, **g})
    return out


def absent(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each point (engine, policy, parameters) none of whose runs succeeded: it has no
    makespan, no gain and no model error, and this says why (its last run's error)."""
    groups: dict[tuple[Any, ...], list[dict[str, Any]]] = {}
    for r in rows:
        groups.setdefault((r["engine"], r["policy"], *(r[k] for k in CHARTS)), []).append(r)
    out = []
    for (engine, policy, *levels), rs in sorted(groups.items(), key=lambda kv: str(kv[0])):
        if any(r["status"] == "ok" for r in rs):
            continue
        lines = [ln.strip() for ln in (rs[-1].get("error") or "").splitlines() if ln.strip()]
        where = dict(zip(CHARTS, levels, strict=True))
        cause = lines[-1] if lines else rs[-1]["status"]
        out.append({"engine": engine, "policy": policy, **where, "runs": len(rs), "cause": cause})
    return out


def unanswered(summary: dict[str, Any]) -> str | None:
    """Why the study's summary is not whole (None: it is), in one line."""
    gone = summary.get("absent") or []
    if not gone:
        return None
    head = (
        f"no run of the study succeeded ({summary['failed']} of {summary['runs']} failed)"
        if summary["failed"] == summary["runs"]
        else f"{len(gone)} point(s) have no value"
    )
    first = gone[0]
    what = " ".join(f"{k}={first[k]}" for k in CHARTS)
    return f"{head}, e.g. {first['engine']} {first['policy']} {what}: {first['cause']}"


def report(out: Path) -> dict[str, Any]:
    """Charts and ``summary.json`` for the study in ``out``; returns the summary."""
    from perflab.studies.postprocess_charts import charts
    from perflab.workloads.postprocess import remodel

    # Every run predicted by the current model from its own stored measurements.
    rows = [remodel(r) for r in load(out / "points.jsonl")]
    engines = sorted({r["engine"] for r in rows})
    summary = {
        "runs": len(rows),
        "failed": sum(r["status"] != "ok" for r in rows),
        "base_gain": [g for e in engines if (g := gain_at_base(rows, e)) is not None],
        "gains": {e: gain_series(rows, e) for e in engines},
        "model_error": model_errors(rows),
        "points": summarize(rows),
        "absent": absent(rows),
        "charts": [str(p) for p in charts(summarize(rows), out)],
    }
    (out / "summary.json").write_text(json.dumps(summary, indent=1, default=str))
    return summary
