"""The host-overlap check: runs whose measured windows overlapped on one boot id."""

from __future__ import annotations

from typing import Any

from perflab.analysis.hostshare import shared_hosts, warning
from perflab.run.record import RunRecord


def _rec(rid: str, start: int, end: int, node: str, boot: str | None = "B") -> RunRecord:
    env: dict[str, Any] = {"batch": {"scheduler": "slurm", "node": node, "job_id": "1"}}
    if boot:
        env["host"] = {"boot_id": boot, "machine_id": "M", "hostname": node}
    return RunRecord(
        run_id=rid, campaign="c", started_at=f"2026-11-27T05:00:{start:02d}+00:00",
        ended_at=f"2026-11-27T05:00:{end:02d}+00:00", target="command", workload="w",
        params={}, treatments=[], status="ok", env=env,
    )  # fmt: skip


def test_runs_overlapping_on_one_boot_id_are_named_by_kind() -> None:
    runs = [
        _rec("a", 0, 10, "node1"),
        _rec("b", 5, 12, "node1"),  # same node, overlapping a: not exclusive
        _rec("c", 11, 20, "node2"),  # overlaps b on another node of one machine
        _rec("d", 30, 40, "node1"),  # alone in time
        _rec("e", 31, 39, "node3", boot="other"),  # another machine
        _rec("f", 0, 50, "node4", boot=None),  # no identity: not judged
    ]
    found = shared_hosts(runs)
    assert [(f.runs, f.same_node) for f in found] == [(("a", "b"), True), (("b", "c"), False)]
    line = warning(found)
    assert line is not None
    assert "1 pair(s) on the same node (exclusive nodes not honoured): a@node1+b@node1" in line
    assert "1 pair(s) on different nodes of one machine" in line and "b@node1+c@node2" in line


def test_no_overlap_no_warning() -> None:
    runs = [_rec("a", 0, 10, "node1"), _rec("b", 10, 20, "node1"), _rec("c", 0, 10, "n2", "X")]
    assert shared_hosts(runs) == [] and warning([]) is None
