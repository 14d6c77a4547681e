"""``atlas status`` and ``atlas ack``: every benchmark's steps with their ends, ratio and
interval, state and culprits; triage (a note, or "expected") kept in the store."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from perflab.atlas.steps import ROUNDS, retried, rounds_done
from perflab.atlas.store import StepRow, Store
from perflab.errors import PerflabError


def step_dict(s: StepRow, points: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """A step as status and the site show it: ends with their subjects, the ratio and
    interval (the confirmation's, else the detection's), state, culprits, link."""
    conf, det = s.data.get("confirm") or {}, s.data.get("detect") or {}
    src = conf or det
    return {
        "id": s.id, "benchmark": s.bench, "state": s.state, "direction": s.direction,
        "a": s.a, "b": s.b,
        "a_subject": points.get(s.a, {}).get("subject"),
        "b_subject": points.get(s.b, {}).get("subject"),
        "ratio": src.get("ratio"), "low": src.get("low"), "high": src.get("high"),
        "ratio_from": "the gate on fresh runs" if conf else "detection",
        "detection": det, "confirmation": conf or None,
        "rounds": rounds_done(s.data),
        "retry": retried(s.state, s.data),
        "culprits": s.data.get("culprits", []),
        "search": s.data.get("search"),
        "keys": s.data.get("keys", []),
        "link": s.link, "note": s.note, "expected": bool(s.data.get("expected")),
        "created": s.created, "updated": s.updated,
    }  # fmt: skip


def status(dir_: Path, store: Store, benchmarks: list[str]) -> dict[str, Any]:
    """Every benchmark's series size, failures and steps."""
    points = {p["key"]: p for p in store.points()}
    out: dict[str, Any] = {"dir": str(dir_), "points": len(points),
                           "updates": store.updates()[-1:], "benchmarks": {}}  # fmt: skip
    for name in benchmarks:
        runs, failed = store.runs(name), store.failures(name)
        out["benchmarks"][name] = {
            "points_measured": len(runs),
            "runs": sum(len(v) for v in runs.values()),
            "failed": {k: {"kind": kind, "reason": r} for k, (kind, r) in failed.items()},
            "steps": [step_dict(s, points) for s in store.steps(name)],
        }  # fmt: skip
    return out


def ack(store: Store, step_id: int, note: str | None, expected: bool) -> StepRow:
    """Acknowledge step ``step_id`` with a note (or as expected); a fixed step keeps its state."""
    s = store.step(step_id)
    if s is None:
        raise PerflabError(f"STEP {step_id}: no such step (atlas status lists them)")
    if not note and not expected:
        raise PerflabError("atlas ack: give --note TEXT or --expected")
    state = None if s.state == "fixed" else "acknowledged"
    store.set_step(step_id, state, {"expected": expected} if expected else None,
                   note=note or "expected")  # fmt: skip
    got = store.step(step_id)
    assert got is not None
    return got


def lines(st: dict[str, Any]) -> list[str]:
    """The status as text."""
    out = [f"atlas {st['dir']}: {st['points']} commits known"]
    for name, b in st["benchmarks"].items():
        out.append(f"{name}: {b['points_measured']} points measured, {b['runs']} runs")
        for k, f in b["failed"].items():
            out.append(f"  skipped {k[:10]}: {f['reason']}")
        for s in b["steps"]:
            ci = f" ({s['low']:.3f}–{s['high']:.3f})" if s["low"] is not None else ""
            link = f", linked to step {s['link']}" if s["link"] else ""
            out.append(f"  step {s['id']} [{s['state']}] {s['a'][:10]}..{s['b'][:10]} "
                       f"{s['ratio']:.3f}×{ci} {s['direction']}{link}")  # fmt: skip
            out += _rounds(s)
            for c in s["culprits"]:
                pr = f" #{c['pr']}" if c["pr"] else ""
                out.append(f"    culprit {c['sha'][:10]}{pr} {c['subject'][:60]}: share "
                           f"{c['share']:.0%} ({c['share_low']:.0%}–{c['share_high']:.0%}), "
                           f"{len(c['hunks'])} hunk groups")  # fmt: skip
                out += [f"      {h}" for h in _hunks(c["hunks"])]
            if s["note"]:
                out.append(f"    note: {s['note']}")
    return out


def _rounds(s: dict[str, Any]) -> list[str]:
    """The gate's rounds of a step that needed more than one, or is waiting for the next."""
    r = s["rounds"]
    if not r or (len(r) == 1 and not s["retry"]):
        return []
    said = ", ".join(f"{x['verdict']} at {x['runs']} runs (level {x['level']:.2g})" for x in r)
    if s["retry"]:
        return [f"    gate: round {len(r)} of {ROUNDS} {said.rsplit(', ', 1)[-1]}; queued: round "
                f"{len(r) + 1} with twice the runs, at the next update"]  # fmt: skip
    tail = "" if s["state"] != "undecided" else f"; {ROUNDS} rounds spent, not retried"
    return [f"    gate rounds: {said}{tail}"]


def _hunks(hunks: list[dict[str, Any]]) -> list[str]:
    """A culprit's hunk groups: each measured one's share with its interval, or why not."""
    out = []
    for h in hunks:
        if h["factor"] == "listed":
            continue
        name = ", ".join(h["units"][:3]) + (" …" if len(h["units"]) > 3 else "")
        if "share" in h:
            out.append(f"hunk {name}: share {h['share']:.0%} ({h['share_low']:.0%}–"
                       f"{h['share_high']:.0%}), reverted {h['ratio']:.3f}× "
                       f"({h['verdict']})")  # fmt: skip
        elif h.get("to_measure"):
            out.append(f"hunk {name}: to be measured (queued)")
        else:
            out.append(f"hunk {name}: {h.get('not_measured') or 'listed'}")
    return out
