"""Runs that overlapped in time on one physical host: exclusive nodes not honoured, or
"nodes" that are one machine.

A run measured through a batch scheduler records its node (``env.batch.node``), its
hostname and its host's identity (``env.host``: the kernel's boot id, the machine id and
the network namespace it ran in). Two runs whose measured windows overlap and whose boot ids
(and machine ids) are equal ran at the same time on one kernel, so each could disturb the
other's timings. Of such a pair:

* ``same_node``: both on one node: the scheduler put two measurements on one node, the
  exclusive request was not honoured (or not made). Warned.
* ``one_machine``: on nodes of different names that share one network (two slurmds of one
  machine, containers on the host's network): those "nodes" are one machine. Warned.
* ``namespaces``: on nodes that each have a network namespace of their own on one kernel
  (the throwaway cluster's nodes; containers with their own network): counted as separate
  nodes, as the cluster presents them, and not warned; they share the machine's CPUs, which a
  user of such a cluster knows. Counted in the JSON.

Records made before the network namespace was recorded are judged by node name alone. Runs
without a host identity (older records, the local runner) are not judged.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from perflab.run.record import RunRecord

#: Pairs named per kind in the warning line (the rest counted).
SHOWN = 4
#: The kinds of pair that are warned about, and how the warning says them.
WARNED = {
    "same_node": "on the same node (exclusive nodes not honoured)",
    "one_machine": "on different nodes of one machine (those nodes are not separate hosts)",
}


@dataclass(frozen=True)
class SharedHost:
    """Two runs that overlapped in time on one physical host."""

    runs: tuple[str, str]
    nodes: tuple[str, str]
    boot_id: str
    kind: str = "same_node"

    @property
    def same_node(self) -> bool:
        return self.kind == "same_node"

    @property
    def warned(self) -> bool:
        return self.kind in WARNED


@dataclass(frozen=True)
class _Run:
    window: tuple[float, float]
    host: tuple[str, str]
    netns: str | None
    node: str
    run_id: str


def _window(r: RunRecord) -> tuple[float, float] | None:
    try:
        a = datetime.fromisoformat(r.started_at).timestamp()
        b = datetime.fromisoformat(r.ended_at).timestamp()
    except (TypeError, ValueError):
        return None
    return (a, b) if b > a else None


def _judged(records: list[RunRecord]) -> list[_Run]:
    runs = []
    for r in records:
        env = r.env or {}
        host, batch = env.get("host") or {}, env.get("batch") or {}
        window = _window(r)
        if not batch or not host.get("boot_id") or window is None:
            continue
        node = str(batch.get("node") or host.get("hostname") or "?")
        ident = (str(host["boot_id"]), str(host.get("machine_id")))
        runs.append(_Run(window, ident, host.get("netns"), node, r.run_id))
    return sorted(runs, key=lambda u: (u.window, u.run_id))


def _kind(a: _Run, b: _Run) -> str:
    if a.node == b.node:
        return "same_node"
    if a.netns and b.netns and a.netns != b.netns:
        return "namespaces"
    return "one_machine"


def shared_hosts(records: list[RunRecord]) -> list[SharedHost]:
    """Every pair of batch-scheduled runs that overlapped in time with the same boot id and
    machine id, in start order, each with its kind (``same_node``, ``one_machine``,
    ``namespaces``)."""
    runs = _judged(records)
    found = []
    for i, a in enumerate(runs):
        for b in runs[i + 1 :]:
            if b.window[0] >= a.window[1]:
                break
            if b.host == a.host:
                found.append(SharedHost((a.run_id, b.run_id), (a.node, b.node), a.host[0],
                                        _kind(a, b)))  # fmt: skip
    return found


def warning(found: list[SharedHost]) -> str | None:
    """One line naming the warned pairs (None when there are none)."""
    parts = []
    for kind, what in WARNED.items():
        pairs = [f for f in found if f.kind == kind]
        if pairs:
            named = ", ".join(
                f"{p.runs[0]}@{p.nodes[0]}+{p.runs[1]}@{p.nodes[1]}" for p in pairs[:SHOWN]
            )
            more = f" and {len(pairs) - SHOWN} more" if len(pairs) > SHOWN else ""
            parts.append(f"{len(pairs)} pair(s) {what}: {named}{more}")
    if not parts:
        return None
    return "runs that overlapped in time shared one physical host (same boot id): " + "; ".join(
        parts
    )


def summary(records: list[RunRecord]) -> dict[str, Any]:
    """The JSON of the check (``shared_hosts`` in ``analyze --json`` and the report's
    analysis.json): how many runs carried a host identity (``judged``), every warned pair
    (``pairs``: runs, nodes, boot id, kind), how many overlapping pairs ran on separate
    network namespaces of one kernel (``namespace_pairs``, not warned) and the warning line
    (None without a warned pair)."""
    found = shared_hosts(records)
    warned = [f for f in found if f.warned]
    return {
        "judged": len(_judged(records)),
        "pairs": [
            {"runs": list(f.runs), "nodes": list(f.nodes), "boot_id": f.boot_id, "kind": f.kind}
            for f in warned
        ],
        "namespace_pairs": len(found) - len(warned),
        "warning": warning(warned),
    }


def unjudged() -> dict[str, Any]:
    """The check's JSON where there are no records to judge (a dataset CSV)."""
    return {"judged": 0, "pairs": [], "namespace_pairs": 0, "warning": None}
