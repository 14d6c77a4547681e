"""Profile a target: run it (and optionally a treated version) marked as profiled, traced
when a kind needs it, analyse every requested kind, project file-system load to N nodes,
and write ``profile.json``, figures and ``profile.html``.

A profiled run is slowed by its tracer: its record carries ``measurement.profile`` and it is
never written to a campaign store, so it cannot be mixed with timing runs.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from perflab.errors import PerflabError
from perflab.files import atomic_write, home_dir, output_dir
from perflab.profile import PROFILE_KINDS
from perflab.profile.base import ProfileData
from perflab.profile.strace import parse_file, require_strace, strace_prefix
from perflab.profile.syscalls import project
from perflab.run.measure import measure, validate
from perflab.run.record import RunRecord
from perflab.spec import RunSpec

DEFAULT_KINDS = ("timeline", "io", "syscalls")
#: Projection defaults: the issue's 1,000 nodes × 64 workers, all starting within 10 s.
DEFAULT_NODES, DEFAULT_NODE_WORKERS, DEFAULT_WINDOW_S = 1000, 64, 10.0


def default_out() -> Path:
    from datetime import UTC, datetime

    return home_dir("profiles") / datetime.now(UTC).strftime("%Y%m%dT%H%M%S")


def check_kinds(kinds: list[str]) -> list[str]:
    """The kinds, each known, and strace when one needs it (PerflabError otherwise)."""
    if not kinds:
        raise PerflabError("--kinds: give at least one of " + PROFILE_KINDS.help())
    for k in kinds:
        PROFILE_KINDS.get(k)
    if any(PROFILE_KINDS.get(k).traced for k in kinds):
        require_strace()
    return list(dict.fromkeys(kinds))


def profile_one(
    spec: RunSpec, kinds: list[str], label: str, out: Path, keep_trace: bool
) -> dict[str, Any]:
    """Run ``spec`` once, profiled with ``kinds``; the kinds' results and the run record."""
    traced = any(PROFILE_KINDS.get(k).traced for k in kinds)
    strace = require_strace() if traced else None
    slug = "".join(c if c.isalnum() else "_" for c in label) or "run"
    trace_file = (out / f"{slug}.strace").resolve()
    run = replace(
        spec,
        profile=list(kinds),
        keep_run_dir=True,
        run_root=str((out / "runs" / slug).resolve()),
        wrapper=[*spec.wrapper, *(strace_prefix(str(trace_file), strace) if strace else [])],
        params=dict(spec.params),
        env=dict(spec.env),
    )
    record = _accept_scoreless(measure(run))
    profile = {
        "kinds": kinds,
        "tracer": _strace_version(strace) if strace else None,
        "note": "profiled run: slowed by its tracer; never stored with timing runs",
    }
    record = replace(record, measurement={**record.measurement, "profile": profile})
    kept = record.measurement.get("run_dir")
    run_dir = Path(kept) if kept else None
    tasks = _read_json(run_dir / "timeline.json") if run_dir else None
    trace = parse_file(str(trace_file)) if strace and trace_file.exists() else None
    stream = _read_json(run_dir / "engine_stream.json") if run_dir else None
    data = ProfileData(label, record, tasks or [], trace, stream)
    results: dict[str, Any] = {}
    for k in kinds:
        kind = PROFILE_KINDS.get(k)
        if kind.traced and trace is None:
            results[k] = {"error": "no trace was written (see the run's error)"}
            continue
        results[k] = kind.analyze(data)
    if trace is not None:
        results["trace"] = {
            "calls": len(trace.calls),
            "processes": len(trace.procs),
            "unparsed_lines": trace.bad_lines,
        }
    if not keep_trace:
        trace_file.unlink(missing_ok=True)
        if run_dir and record.status == "ok":
            shutil.rmtree(run_dir, ignore_errors=True)
    return {"label": label, "record": record.to_dict(), **results}


def _accept_scoreless(record: RunRecord) -> RunRecord:
    """A command profiled for its calls need not print a score: exit 0 is a good run."""
    if record.measurement.get("bad_score") and record.measurement.get("returncode") == 0:
        return replace(
            record, status="ok", error=None, measurement={**record.measurement, "score": None}
        )
    return record


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None


def _strace_version(strace: str) -> str:
    out = subprocess.run([strace, "-V"], capture_output=True, text=True, check=False)
    first = out.stdout.splitlines()[0] if out.stdout else "strace"
    return f"{first} -f --seccomp-bpf"


def profile(
    spec: RunSpec,
    kinds: list[str],
    out_dir: str | Path | None = None,
    against: RunSpec | None = None,
    labels: tuple[str, str] = ("untreated", "treated"),
    nodes: int = DEFAULT_NODES,
    node_workers: int = DEFAULT_NODE_WORKERS,
    window_s: float = DEFAULT_WINDOW_S,
    keep_trace: bool = False,
    on_start: Callable[[], None] | None = None,
) -> dict[str, Any]:
    """Profile ``spec`` (and ``against``, e.g. the same target with a fix) and write the report.

    Returns the profile as plain data (also ``OUT/profile.json``); bad input raises
    PerflabError before anything runs; ``on_start`` is called once it is checked.
    """
    kinds = check_kinds(kinds)
    if nodes < 1 or node_workers < 1 or not window_s > 0:
        raise PerflabError("--nodes and --node-workers must be >= 1 and --window positive")
    specs = [(labels[0], spec)] + ([(labels[1], against)] if against is not None else [])
    for _, s in specs:
        validate(s)
    out = output_dir(out_dir or default_out(), "-o")
    if on_start is not None:
        on_start()
    runs = [profile_one(s, kinds, label, out, keep_trace) for label, s in specs]
    result: dict[str, Any] = {"kinds": kinds, "runs": runs, "out": str(out)}
    result["projection"] = [
        {"label": r["label"], **project_run(r, nodes, node_workers, window_s)}
        for r in runs
        if "worker_start" in r.get("syscalls", {})
    ]
    result["comparison"] = compare(runs) if len(runs) == 2 else None
    result["findings"] = [f for r in runs for f in _findings(r)]
    atomic_write(out / "profile.json", json.dumps(result, indent=1, default=str))
    from perflab.profile.report import write_html

    result["html"] = str(write_html(result, out))
    return result


def project_run(run: dict[str, Any], nodes: int, workers: int, window_s: float) -> dict[str, Any]:
    """The projection of one run: per worker start (task systems), or, for a command with no
    tasks, the whole tree as one start (a job's start)."""
    sc = run["syscalls"]
    if sc["worker_start"]["workers"]:
        per, node, unit = (
            sc["worker_start"]["metadata_ops"],
            sc["node_overhead"]["metadata_ops"],
            "worker start",
        )
    else:
        total = sc["total"]
        per, node, unit = sum(v for k, v in total.items() if k != "fstat"), 0, "command start"
    return {"unit": unit, **project(per, node, nodes, workers, window_s)}


def compare(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """Before/after ratios: write calls and MiB/s (io), worker-start calls (syscalls)."""
    a, b = runs
    out: dict[str, Any] = {"from": a["label"], "to": b["label"]}
    if "write_calls" in a.get("io", {}) and "write_calls" in b.get("io", {}):
        out["write_calls"] = [a["io"]["write_calls"], b["io"]["write_calls"]]
        out["write_calls_cut"] = _ratio(a["io"]["write_calls"], b["io"]["write_calls"])
        out["mib_per_s"] = [a["io"]["mib_per_s"], b["io"]["mib_per_s"]]
    if "worker_start" in a.get("syscalls", {}) and "worker_start" in b.get("syscalls", {}):
        sa, sb = a["syscalls"]["worker_start"], b["syscalls"]["worker_start"]
        out["worker_start_calls"] = [sa["all_calls"], sb["all_calls"]]
        out["worker_start_cut"] = _ratio(sa["all_calls"], sb["all_calls"])
        out["worker_start_lookups"] = [sa["metadata_ops"], sb["metadata_ops"]]
        out["worker_start_lookups_cut"] = _ratio(sa["metadata_ops"], sb["metadata_ops"])
    return out


def _ratio(before: float, after: float) -> float | None:
    return before / after if after else None


def _findings(run: dict[str, Any]) -> list[str]:
    found = [f"{run['label']}: {f}" for f in run.get("io", {}).get("findings", [])]
    tl = run.get("timeline", {})
    share = tl.get("io_share")
    if share is not None and share >= 0.5:
        found.append(f"{run['label']}: {share:.0%} of the tasks' execute time is spent in writes")
    return found
