"""File-syscall profile: counts per process start and per task, projected to N nodes × W workers.

A start that stats thousands of files is harmless on one node and melts a shared
filesystem on a thousand. Each class (stat, open, access, readlink, getdents) is counted per
process over the whole tree; a *start* is a process's calls from its creation to its first
task (workers) or to its end; a *task's* calls are a worker's calls inside the task's window.
``fstat`` (a stat of an already open descriptor) is counted apart: it needs no path lookup.
"""

from __future__ import annotations

import os
from collections import Counter, defaultdict
from typing import Any

from perflab.profile import PROFILE_KINDS
from perflab.profile.base import FigureSpec, ProfileData, TracedKind
from perflab.profile.figures import syscall_bars
from perflab.profile.strace import FILE_CLASSES, Trace, iter_file_calls

CLASSES = (*FILE_CLASSES, "fstat")


def _metadata(c: Counter[str]) -> int:
    """Path lookups a shared filesystem's metadata server would see (fstat excluded)."""
    return sum(v for k, v in c.items() if k != "fstat")


def roles(trace: Trace, task_pids: set[int]) -> dict[int, str]:
    """A role for each process: submit (the root), worker (ran tasks), manager/interchange
    (by the program it executed), helper (in a manager's subtree), or other."""
    out: dict[int, str] = {}
    root = next(iter(trace.procs), None)
    for pid, proc in trace.procs.items():
        exe = os.path.basename(proc.execs[-1]) if proc.execs else ""
        if pid in task_pids:
            out[pid] = "worker"
        elif pid == root:
            out[pid] = "submit"
        elif exe == "process_worker_pool.py":
            out[pid] = "manager"
        elif exe == "interchange.py":
            out[pid] = "interchange"
        else:
            out[pid] = "other"
    for pid, proc in trace.procs.items():
        if out[pid] == "other" and _has_ancestor(trace, proc.parent, out, "manager"):
            out[pid] = "helper"
    return out


def _has_ancestor(trace: Trace, pid: int | None, role: dict[int, str], want: str) -> bool:
    seen = set()
    while pid is not None and pid not in seen:
        if role.get(pid) == want:
            return True
        seen.add(pid)
        pid = trace.procs[pid].parent if pid in trace.procs else None
    return False


def syscall_profile(trace: Trace, tasks: list[dict[str, Any]]) -> dict[str, Any]:
    """Counts per class: whole tree, per process (with role), per worker start, per task."""
    task_pids = {int(t["pid"]) for t in tasks}
    first_task: dict[int, float] = {}
    windows: dict[int, list[tuple[float, float]]] = defaultdict(list)
    for t in tasks:
        pid = int(t["pid"])
        first_task[pid] = min(first_task.get(pid, float("inf")), float(t["started"]))
        windows[pid].append((float(t["started"]), float(t["ended"])))
    role = roles(trace, task_pids)
    total: Counter[str] = Counter()
    per_proc: dict[int, Counter[str]] = defaultdict(Counter)
    start: dict[int, Counter[str]] = defaultdict(Counter)
    in_tasks: Counter[str] = Counter()
    for pid, cls, call in iter_file_calls(trace):
        total[cls] += 1
        per_proc[pid][cls] += 1
        if call.ts < first_task.get(pid, float("inf")):
            start[pid][cls] += 1
        elif any(a <= call.ts <= b for a, b in windows.get(pid, ())):
            in_tasks[cls] += 1
    workers = [p for p in task_pids if p in trace.procs]
    per_start = _mean_counter([start[p] for p in workers])
    node: Counter[str] = Counter()
    for pid, r in role.items():
        if r in ("manager", "helper"):
            node.update(per_proc[pid])
    return {
        "total": _full(total),
        "processes": [
            {
                "pid": pid,
                "parent": proc.parent,
                "role": role[pid],
                "exe": proc.execs[-1] if proc.execs else None,
                "threads": len(proc.threads),
                "exit": proc.exit,
                "counts": _full(per_proc[pid]),
                "start_counts": _full(start[pid]),
            }
            for pid, proc in trace.procs.items()
        ],
        "worker_start": {
            "workers": len(workers),
            "mean": per_start,
            "metadata_ops": sum(v for k, v in per_start.items() if k != "fstat"),
            "all_calls": sum(per_start.values()),
            "seconds": _mean([first_task[p] - trace.procs[p].start for p in workers]),
        },
        "node_overhead": {"counts": _full(node), "metadata_ops": _metadata(node)},
        "per_task": {
            "tasks": len(tasks),
            "mean": {k: v / len(tasks) for k, v in _full(in_tasks).items()} if tasks else {},
        },
    }


def _full(c: Counter[str]) -> dict[str, int]:
    return {k: int(c.get(k, 0)) for k in CLASSES}


def _mean(xs: list[float]) -> float | None:
    return sum(xs) / len(xs) if xs else None


def _mean_counter(cs: list[Counter[str]]) -> dict[str, float]:
    if not cs:
        return {k: 0.0 for k in CLASSES}
    return {k: sum(c.get(k, 0) for c in cs) / len(cs) for k in CLASSES}


FORMULA = "ops = N × (node + W × worker_start);  rate = ops ÷ window"


def project(
    worker_start_ops: float, node_ops: float, nodes: int, workers: int, window_s: float
) -> dict[str, Any]:
    """Metadata operations a shared filesystem sees when ``nodes`` nodes start ``workers``
    workers each at once: the measured per-worker start count times the workers, plus each
    node's own (manager) processes, and the rate if all starts fall in ``window_s`` seconds."""
    ops = nodes * (node_ops + workers * worker_start_ops)
    return {
        "formula": FORMULA,
        "nodes": nodes,
        "workers_per_node": workers,
        "worker_start_ops": worker_start_ops,
        "node_ops": node_ops,
        "window_s": window_s,
        "ops": ops,
        "ops_per_s": ops / window_s if window_s > 0 else None,
        "text": (
            f"{nodes:,} × ({node_ops:,.0f} + {workers} × {worker_start_ops:,.0f}) = {ops:,.0f} "
            f"metadata ops; over {window_s:g} s: {ops / window_s:,.0f} ops/s"
        ),
    }


@PROFILE_KINDS.register
class SyscallsKind(TracedKind):
    name = "syscalls"

    def analyze(self, data: ProfileData) -> dict[str, Any]:
        assert data.trace is not None
        return syscall_profile(data.trace, data.tasks)

    def figures(self, results: dict[str, dict[str, Any]]) -> list[FigureSpec]:
        figs = []
        for label, res in results.items():
            made = syscall_bars(res)
            if made is not None:
                plot, caption = made
                slug = "".join(c if c.isalnum() else "_" for c in label)[:60]
                figs.append(
                    (f"syscalls_{slug}", f"File system calls by process — {label}", plot, caption)
                )
        return figs
