"""Where a run's wall time goes: ``measurement.phases`` of the run record.

Three processes stamp the moments a run passes through, all on the same wall clock
(``time.time()``): the caller (``measure``), the supervisor and the measured child. The
phases are the gaps between consecutive stamps, so they add up to the caller's whole time
for the run (``total``), whatever is missing: a stamp a failed run never reached simply
gives its time to the next phase that has one.
"""

from __future__ import annotations

import time
from typing import Any

#: The phases of an engine run, in order: (name, the stamp that ends it).
ENGINE_PHASES = (
    ("prepare", "launch"),  # validation, venvs, env snapshot, run dir, supervisor fork
    ("interpreter", "module"),  # the measured interpreter's start, up to perflab.run.child
    ("imports", "main"),  # the child's imports (engines, workloads)
    ("engine_start", "warmup"),  # spec, workload.prepare, engine.start, workload.started
    ("worker_connect", "connected"),  # warm-up submitted until its first result
    ("warmup", "first_window"),  # the rest of the warm-up batch, settle
    ("estimates", "window_start"),  # counted batches before the final one (--time)
    ("window", "window_end"),  # the final counted batch
    ("shutdown", "down"),  # settle, record_env, the engine's shutdown (if graceful)
    ("exit", "main_exit"),  # result.json written, the child's interpreter exits
    ("reap", "reaped"),  # the rest of the tree ends (lingers, is killed) and is reaped
    ("record", "end"),  # supervisor's result, the record filled, run dir removed
)

#: The phases of a black-box command run.
COMMAND_PHASES = (
    ("prepare", "launch"),
    ("command", "main_exit"),
    ("reap", "reaped"),
    ("record", "end"),
)


def now() -> float:
    """A stamp: wall-clock seconds, comparable between the run's processes."""
    return time.time()


def child_stamps(clock: dict[str, float], result: dict[str, Any]) -> dict[str, float]:
    """The child's stamps, with ``connected`` from the warm-up's first result."""
    out = dict(clock)
    warm = result.get("warmup")
    if "warmup" in out:
        first = float(warm["first_result_s"]) if warm else 0.0
        out["connected"] = out["warmup"] + first
    batches = result.get("batches") or []
    if batches:
        out["first_window"] = float(batches[0]["started_at"])
    return out


def phases(stamps: dict[str, float], command: bool) -> dict[str, float]:
    """Seconds per phase from ``stamps`` (which must hold ``begin`` and ``end``), plus
    ``total``; the phases add up to ``total`` exactly (up to float rounding)."""
    order = COMMAND_PHASES if command else ENGINE_PHASES
    out: dict[str, float] = {}
    last = stamps["begin"]
    for name, stamp in order:
        t = stamps.get(stamp)
        if t is None:
            out[name] = 0.0
            continue
        # a stamp earlier than the last (a clock step, a child that skipped ahead) counts
        # nothing rather than a negative time; the next phase then takes the difference
        t = max(t, last)
        out[name] = t - last
        last = t
    out["total"] = last - stamps["begin"]
    return out


def window_share(records: list[dict[str, Any]]) -> dict[str, float] | None:
    """The share of a sequence of runs' wall time (first start to last end, from the
    records' timestamps) spent inside counted windows."""
    from datetime import datetime

    spans = [
        (datetime.fromisoformat(r["started_at"]), datetime.fromisoformat(r["ended_at"]))
        for r in records
        if r.get("started_at") and r.get("ended_at")
    ]
    if not spans:
        return None
    wall = (max(e for _, e in spans) - min(s for s, _ in spans)).total_seconds()
    inside = sum(float((r.get("measurement") or {}).get("window_s") or 0.0) for r in records)
    return {"runs": len(spans), "wall_s": wall, "window_s": inside, "share": inside / wall}
