"""``io``: write-family system calls binned by size like Darshan, bytes and achieved MiB/s.

From the strace of the whole tree (``-y`` names each descriptor's file): only writes to regular
files count; when the run has a timeline, the tasks' own writes (inside their start-end
windows) are profiled apart from the whole tree's (logging, pipes and sockets included).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import Any

from perflab.profile import PROFILE_KINDS
from perflab.profile.base import FigureSpec, ProfileData, TracedKind
from perflab.profile.figures import BIN_LABELS, histogram
from perflab.profile.strace import WRITE_CALLS, Trace

#: Darshan's access-size bins (upper bounds, bytes); the last is open-ended.
BINS = tuple(zip(BIN_LABELS, (100, 1024, 10 * 1024, 100 * 1024, 1024 * 1024, None), strict=True))
SMALL = 1024
MIB = 1024 * 1024


def size_bin(n: int) -> str:
    """The Darshan bin a write of ``n`` bytes falls in (0-100 holds sizes below 100)."""
    for label, upper in BINS:
        if upper is None or n < upper:
            return label
    raise AssertionError("unreachable")


def target_kind(fd_path: str | None) -> str:
    """``file`` for a regular path, else socket/pipe/tty/other (only files go in the profile)."""
    if fd_path is None:
        return "other"
    if fd_path.startswith("socket:"):
        return "socket"
    if fd_path.startswith("pipe:"):
        return "pipe"
    if fd_path.startswith("/dev/"):
        return "device"
    if fd_path.startswith("/"):
        return "file"
    return "other"


def io_profile(
    trace: Trace, windows: dict[int, list[tuple[float, float]]] | None = None
) -> dict[str, Any]:
    """Histogram, bytes, time in write calls and MiB/s of writes to files (per process too).

    ``windows`` (pid -> [(start, end)]) keeps only the calls inside those processes' task
    windows, i.e. the writes the tasks made (not the workers' own logging). MiB/s is bytes
    over the summed duration of the write calls themselves (Darshan's "I/O time"), so it is
    the rate the calls
    achieved, not the run's throughput.
    """
    hist: Counter[str] = Counter()
    bin_time: dict[str, float] = defaultdict(float)
    by_kind: Counter[str] = Counter()
    per_proc: dict[int, dict[str, float]] = defaultdict(
        lambda: {"calls": 0.0, "bytes": 0.0, "time_s": 0.0}
    )
    total_bytes = 0
    total_time = 0.0
    calls = 0
    for call in trace.calls:
        if call.name not in WRITE_CALLS or call.ret is None or call.ret < 0:
            continue
        pid = trace.pid_of(call)
        if windows is not None and not any(a <= call.ts <= b for a, b in windows.get(pid, ())):
            continue
        kind = target_kind(call.fd_path)
        by_kind[kind] += 1
        if kind != "file":
            continue
        label = size_bin(call.ret)
        hist[label] += 1
        bin_time[label] += call.dur or 0.0
        calls += 1
        total_bytes += call.ret
        total_time += call.dur or 0.0
        p = per_proc[pid]
        p["calls"] += 1
        p["bytes"] += call.ret
        p["time_s"] += call.dur or 0.0
    small_bins = [label for label, upper in BINS if upper is not None and upper <= SMALL]
    small = sum(hist[label] for label in small_bins)
    small_time = sum(bin_time[label] for label in small_bins)
    out: dict[str, Any] = {
        "write_calls": calls,
        "bytes": total_bytes,
        "write_time_s": total_time,
        "mib_per_s": (total_bytes / MIB / total_time) if total_time > 0 else None,
        "histogram": {label: hist[label] for label, _ in BINS},
        "small_share": small / calls if calls else None,
        "small_time_share": small_time / total_time if total_time > 0 else None,
        "bin_time_s": {label: bin_time.get(label, 0.0) for label, _ in BINS},
        "calls_by_target": dict(by_kind),
        "per_process": {str(k): v for k, v in sorted(per_proc.items())},
    }
    out["findings"] = findings(out)
    return out


def findings(p: dict[str, Any]) -> list[str]:
    """Plain-language findings, such as "many very small writes"."""
    out = []
    share, time_share = p["small_share"], p["small_time_share"]
    if share is not None and time_share is not None and share >= 0.5 and time_share >= 0.5:
        mean = p["bytes"] / p["write_calls"]
        out.append(
            f"Small writes dominate: {share:.0%} of {p['write_calls']:,} file writes are under "
            f"1 KiB (mean {mean:,.0f} B) and take {time_share:.0%} of the time spent writing; "
            "aggregating them into larger writes cuts the number of calls and their per-call "
            "cost."
        )
    return out


def write_time_in_windows(
    trace: Trace, windows: dict[int, list[tuple[float, float]]]
) -> dict[int, float]:
    """pid -> seconds spent in write calls to files inside that pid's task windows."""
    out: dict[int, float] = defaultdict(float)
    for call in trace.calls:
        if call.name not in WRITE_CALLS or target_kind(call.fd_path) != "file":
            continue
        pid = trace.pid_of(call)
        if any(a <= call.ts <= b for a, b in windows.get(pid, ())):
            out[pid] += call.dur or 0.0
    return dict(out)


@PROFILE_KINDS.register
class IoKind(TracedKind):
    name = "io"

    def analyze(self, data: ProfileData) -> dict[str, Any]:
        assert data.trace is not None
        tree = io_profile(data.trace)
        if not data.tasks:
            return {"scope": "tree", **tree, "tree": tree}
        tasks = io_profile(data.trace, data.windows())
        return {
            "scope": "tasks",
            **tasks,
            "tree": {k: v for k, v in tree.items() if k != "per_process"},
        }

    def figures(self, results: dict[str, dict[str, Any]]) -> list[FigureSpec]:
        made = histogram(results)
        if made is None:
            return []
        plot, caption = made
        return [("write_sizes", "Write sizes", plot, caption)]
