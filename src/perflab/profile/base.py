"""The profile-kind interface: what a kind needs from a run and what it makes of it."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any, ClassVar

from perflab.profile.strace import Trace
from perflab.run.record import RunRecord

#: A figure: (file name, title, plotnine plot, caption).
FigureSpec = tuple[str, str, Any, str]
TRACE_OVERHEAD = (
    "strace stops each traced system call (a seccomp filter lets the others through), so "
    "traced calls and the run's wall time are slower than in a timing run."
)


@dataclass
class ProfileData:
    """What one profiled run left behind: its record, the per-task events (when recorded)
    and the parsed system-call trace of its whole process tree (when traced)."""

    label: str
    record: RunRecord
    tasks: list[dict[str, Any]] = field(default_factory=list)
    trace: Trace | None = None
    #: The engine's own per-task record (Dask's task stream), when it keeps one.
    engine_stream: list[dict[str, Any]] | None = None

    def counted_tasks(self) -> list[dict[str, Any]]:
        """The events of the counted batch(es), without the warm-up."""
        return [t for t in self.tasks if t.get("batch") != "warmup"]

    def windows(self) -> dict[int, list[tuple[float, float]]]:
        """pid -> [(start, end)] of every task (warm-up included) the pid ran."""
        out: dict[int, list[tuple[float, float]]] = defaultdict(list)
        for t in self.tasks:
            out[int(t["pid"])].append((float(t["started"]), float(t["ended"])))
        return dict(out)


class ProfileKind:
    """One kind of profile. ``traced``: it needs the system-call trace (strace)."""

    name: ClassVar[str] = ""
    traced: ClassVar[bool] = False
    #: What the tracer or recorder costs, said in the report.
    overhead: ClassVar[str] = ""

    def analyze(self, data: ProfileData) -> dict[str, Any]:
        """The kind's results for one run (plain JSON data)."""
        raise NotImplementedError

    def figures(self, results: dict[str, dict[str, Any]]) -> list[FigureSpec]:
        """Figures over every profiled run's results (label -> this kind's results)."""
        return []


class TracedKind(ProfileKind):
    """A kind read from the system-call trace of the run's whole tree (``data.trace``)."""

    traced = True
    overhead = TRACE_OVERHEAD
