"""A bisection's result: the JSON it is, and the lines it prints."""

from __future__ import annotations

import math
import shlex
from typing import Any

from perflab.bisect.driver import Point, share_text
from perflab.bisect.search import Search
from perflab.spec import RunSpec


def what_args(
    spec: RunSpec, metric: str, precision: float | None = None, max_time_s: float | None = None
) -> list[str]:
    """The options that name the benchmark a bisection measured (for the commands it prints);
    with ``precision`` its comparisons were planned, and so is the one printed (``compare
    --precision``, with ``max_time_s`` when given), not sized by the base's window."""
    what = (
        ["--command", shlex.quote(spec.command)]
        if spec.command
        else ["--target", spec.target, "--workload", str(spec.workload)]
    )
    if spec.treatments:  # bisect --treat: the treated program was benchmarked
        what += ["--treat", shlex.quote(",".join(spec.treatments))]
    if precision is not None:
        what += ["--precision", f"{precision * 100:g}%"]
        if max_time_s is not None:
            what += ["--max-time", f"{max_time_s:g}"]
    elif spec.tasks:
        what += ["--tasks", str(spec.tasks)]
    elif spec.time_s:
        what += ["--time", str(spec.time_s)]
    return [*what, "--metric", metric]


def stage_dict(axis: str, points: list[Point], search: Search, extra: dict[str, Any]) -> dict:
    """One stage (``releases`` or ``commits``) of a bisection as JSON: the points, the
    search, and each culprit with what the user reads about it."""
    out = {
        "axis": axis,
        "points": [{"key": p.key, "label": p.label, **p.info} for p in points],
        **search.to_dict(),
    }
    out["skipped"] = [
        {"index": i, "key": points[i].key, "label": points[i].label, "reason": why}
        for i, why in sorted(search.skipped.items())
    ]
    out["undecided"] = [
        {**u, "from": points[u["a"]].key, "to": points[u["b"]].key,
         "from_label": points[u["a"]].label, "to_label": points[u["b"]].label}
        for u in search.undecided
    ]  # fmt: skip
    out["culprits"] = [
        {**c.to_dict(), **points[c.index].info, "key": points[c.index].key,
         "before": points[c.before].key, "label": points[c.index].label,
         "candidates": [points[i].key for i in c.candidates]}
        for c in search.culprits
    ]  # fmt: skip
    out.update(extra)
    return out


def _ratio(step: dict[str, Any]) -> str:
    lo, hi = step["low"], step["high"]
    ci = f" ({lo:.3f}–{hi:.3f})" if math.isfinite(lo) and math.isfinite(hi) else ""
    return f"{step['ratio']:.3f}×{ci}"


def lines(result: dict[str, Any]) -> list[str]:
    """The text report: per stage the confirmation, the culprits, what dissolved or was
    skipped, the runs and the error statement."""
    out = [f"bisect {result['package']} {result['good']} → {result['bad']} by {result['metric']}"]
    for st in result["stages"]:
        out.append("")
        out.append(f"{st['axis']}: {len(st['points'])} points, {st['runs']} runs, {st['error']}")
        if st["confirm"]:
            out.append(f"  step {st['points'][0]['label']} → {st['points'][-1]['label']}: "
                       f"{_ratio(st['confirm'])}, {st['confirm']['verdict']}")  # fmt: skip
        out += _outcome(st)
        out += comparison_table(st)
        for c in st["culprits"]:
            out += _culprit(c)
        for a, b in st["dissolved"]:
            out.append(f"  the step dissolves between {st['points'][a]['label']} and "
                       f"{st['points'][b]['label']}: no side of it shows a step")  # fmt: skip
        for u in st.get("undecided", []):
            out.append(f"  undecided {u['from_label']} → {u['to_label']}: {u['ratio']:.3f}×; "
                       f"{u['why']}")  # fmt: skip
        for s in st["skipped"]:
            out.append(f"  skipped {s['label']}: {s['reason']}")
        out += [f"  note: {n}" for n in st["notes"]]
    for n in result.get("notes", []):
        out.append(f"note: {n}")
    if "minutes" in result:
        runs = sum(st["runs"] for st in result["stages"])
        out.append(
            f"this command: {result['runs_made']} runs in {result['minutes']:.1f} min "
            f"(the comparisons above: {runs} runs, those kept from before included)"
        )
    out.append(f"state: {result['state']} ({result['reused']} comparisons reused)")
    return out


def comparison_table(st: dict[str, Any]) -> list[str]:
    """Every comparison the stage decided, in the order made: the two points (short keys),
    the ratio, its interval, the verdict and the runs (both sides); the first is the
    confirmation of the step."""
    if not st["steps"]:
        return []
    keys = [p["key"][:10] for p in st["points"]]
    rows = [("comparison", "ratio", "interval", "verdict", "runs")]
    for s in st["steps"]:
        finite = math.isfinite(s["low"]) and math.isfinite(s["high"])
        rows.append((f"{keys[s['a']]} → {keys[s['b']]}", f"{s['ratio']:.3f}×",
                     f"{s['low']:.3f}–{s['high']:.3f}" if finite else "n/a", s["verdict"],
                     str(s["runs"])))  # fmt: skip
    w = [max(len(r[i]) for r in rows) for i in range(5)]
    out = [f"  comparisons ({len(st['steps'])}, in the order made; the first confirms the step):"]
    for r in rows:
        out.append(f"    {r[0]:<{w[0]}}  {r[1]:>{w[1]}}  {r[2]:<{w[2]}}  {r[3]:<{w[3]}}  "
                   f"{r[4]:>{w[4]}}".rstrip())  # fmt: skip
    return out


def _outcome(st: dict[str, Any]) -> list[str]:
    says = {
        "no step": "  no step between the ends: nothing to bisect",
        "not confirmed": "  the step is not confirmed (inconclusive at the most runs): "
        "nothing bisected (more --runs?)",
        "end failed": "  an end does not build or run: nothing bisected",
        "dissolved": "  the step dissolves: no single point holds it",
        "undecided": "  no culprit decided: the step may lie in the ranges that stayed "
        "undecided (below; more --runs?)",
    }
    return [says[st["outcome"]]] if st["outcome"] in says else []


def _culprit(c: dict[str, Any]) -> list[str]:
    pr = f" (PR #{c['pr']})" if c.get("pr") else ""
    name = c.get("sha", c["key"])[:12] if c.get("sha") else c["key"]
    head = f"  culprit {name}{pr}: {c.get('subject', c['label'])}"
    if c["candidates"]:
        head += f" — or one of {', '.join(k[:10] for k in c['candidates'])} (skipped)"
    out = [
        head,
        f"    {_ratio(c['step'])} after {c['before'][:12]}; share of the step "
        f"{c['share']:.0%} ({share_text(c['share_low'], c['share_high'])})",
    ]
    if c["step"].get("precision"):
        out.append(f"    {c['step']['precision']['line']}")
    out += [f"    $ {cmd}" for cmd in c.get("reproduce", [])]
    out += [f"    {h}" for h in c.get("hunks", [])]
    return out
