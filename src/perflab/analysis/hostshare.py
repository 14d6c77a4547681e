"""Runs that overlapped in time on one physical host: exclusive nodes not honoured, or
"nodes" that are one machine.

A run measured through a batch scheduler records its node (``env.batch.node``), its
hostname and its physical host's identity (``env.host``: the kernel's boot id and the
machine id). Two runs whose measured windows overlap and whose boot ids (and machine ids)
are equal ran at the same time on one kernel, so each disturbed the other's timings:

* on the same node: the scheduler put two measurements on one node, the exclusive request
  was not honoured (or not made);
* on different nodes: those nodes are one machine (containers, VMs sharing a kernel do not
  share a boot id; namespaces, as in the throwaway cluster, do).

Runs without a host identity (older records, the local runner) are not judged.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from perflab.run.record import RunRecord

#: Pairs named per kind in the warning line (the rest counted).
SHOWN = 4


@dataclass(frozen=True)
class SharedHost:
    """Two runs that overlapped in time on one physical host."""

    runs: tuple[str, str]
    nodes: tuple[str, str]
    boot_id: str

    @property
    def same_node(self) -> bool:
        return self.nodes[0] == self.nodes[1]


def _window(r: RunRecord) -> tuple[float, float] | None:
    try:
        a = datetime.fromisoformat(r.started_at).timestamp()
        b = datetime.fromisoformat(r.ended_at).timestamp()
    except (TypeError, ValueError):
        return None
    return (a, b) if b > a else None


def shared_hosts(records: list[RunRecord]) -> list[SharedHost]:
    """Every pair of batch-scheduled runs that overlapped in time with the same boot id and
    machine id, in start order."""
    runs = []
    for r in records:
        env = r.env or {}
        host, batch = env.get("host") or {}, env.get("batch") or {}
        window = _window(r)
        if not batch or not host.get("boot_id") or window is None:
            continue
        node = str(batch.get("node") or host.get("hostname") or "?")
        ident = (str(host["boot_id"]), str(host.get("machine_id")))
        runs.append((window, ident, node, r.run_id))
    runs.sort()
    found = []
    for i, ((_a0, a1), ident, node, rid) in enumerate(runs):
        for (b0, _), other, onode, orid in runs[i + 1 :]:
            if b0 >= a1:
                break
            if other == ident:
                found.append(SharedHost((rid, orid), (node, onode), ident[0]))
    return found


def warning(found: list[SharedHost]) -> str | None:
    """One line naming the pairs (None when there are none)."""
    if not found:
        return None
    parts = []
    same = [f for f in found if f.same_node]
    apart = [f for f in found if not f.same_node]
    for pairs, what in (
        (same, "on the same node (exclusive nodes not honoured)"),
        (apart, "on different nodes of one machine (those nodes are not separate hosts)"),
    ):
        if pairs:
            named = ", ".join(
                f"{p.runs[0]}@{p.nodes[0]}+{p.runs[1]}@{p.nodes[1]}" for p in pairs[:SHOWN]
            )
            more = f" and {len(pairs) - SHOWN} more" if len(pairs) > SHOWN else ""
            parts.append(f"{len(pairs)} pair(s) {what}: {named}{more}")
    return "runs that overlapped in time shared one physical host (same boot id): " + "; ".join(
        parts
    )
