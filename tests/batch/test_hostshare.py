"""The host-overlap check: runs whose measured windows overlapped on one boot id, by kind,
and its JSON in analyze's result and the report's analysis.json."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from conftest import ROOT
from perflab import api
from perflab.analysis.hostshare import shared_hosts, summary, warning
from perflab.batch.hostid import host_identity
from perflab.campaign.dataset import read_csv
from perflab.campaign.definition import IMPORTED, CampaignDef
from perflab.campaign.store import Store
from perflab.run.record import RunRecord


def _rec(
    rid: str, start: int, end: int, node: str, boot: str | None = "B", netns: str | None = None
) -> RunRecord:
    env: dict[str, Any] = {"batch": {"scheduler": "slurm", "node": node, "job_id": "1"}}
    if boot:
        env["host"] = {"boot_id": boot, "machine_id": "M", "hostname": node, "netns": netns}
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
    assert [(f.runs, f.kind) for f in found] == [(("a", "b"), "same_node"),
                                                 (("b", "c"), "one_machine")]  # fmt: skip
    line = warning(found)
    assert line is not None
    assert "1 pair(s) on the same node (exclusive nodes not honoured): a@node1+b@node1" in line
    assert "1 pair(s) on different nodes of one machine" in line and "b@node1+c@node2" in line


def test_nodes_with_network_namespaces_of_their_own_are_separate_but_one_node_is_not() -> None:
    """The throwaway cluster's nodes share one kernel but each has its own network: with
    exclusive nodes nothing is warned; two jobs on one node (one namespace) still are."""
    exclusive = [_rec("a", 0, 10, "node1", netns="n1"), _rec("b", 1, 9, "node2", netns="n2")]
    s = summary(exclusive)
    assert s["warning"] is None and s["pairs"] == [] and s["namespace_pairs"] == 1
    assert s["judged"] == 2
    shared = [*exclusive, _rec("c", 2, 8, "node1", netns="n1")]
    s = summary(shared)
    assert [p["runs"] for p in s["pairs"]] == [["a", "c"]] and s["namespace_pairs"] == 2
    assert s["pairs"][0]["kind"] == "same_node" and "a@node1+c@node1" in s["warning"]
    # one network, two node names: one machine, whatever the names say
    s = summary([_rec("a", 0, 10, "x", netns="n"), _rec("b", 1, 9, "y", netns="n")])
    assert [p["kind"] for p in s["pairs"]] == ["one_machine"]


def test_no_overlap_no_warning() -> None:
    runs = [_rec("a", 0, 10, "node1"), _rec("b", 10, 20, "node1"), _rec("c", 0, 10, "n2", "X")]
    assert shared_hosts(runs) == [] and warning([]) is None


def test_this_process_has_a_network_namespace() -> None:
    ident = host_identity()
    assert str(ident["netns"]).startswith("net:[") and ident["boot_id"]


def _campaign(tmp_path: Path) -> Path:
    """The golden dataset as a campaign whose runs r0 and r1 overlapped on node1 (every
    other run alone on a node, in a namespace of its own)."""
    records = read_csv(ROOT / "tests" / "golden" / "dataset.csv", "g")
    t0 = datetime(2026, 11, 27, tzinfo=UTC).timestamp()
    placed = []
    for i, r in enumerate(records):
        a, b = t0 + 10 * i, t0 + 10 * i + (15 if i == 0 else 5)  # run 0 overlaps run 1
        node = "node1" if i < 2 else f"node{i}"
        env = {
            **r.env,
            "batch": {"scheduler": "slurm", "node": node, "job_id": str(i)},
            "host": {"boot_id": "B", "machine_id": "M", "netns": node, "hostname": node},
        }
        placed.append(replace(r, env=env, started_at=datetime.fromtimestamp(a, UTC).isoformat(),
                              ended_at=datetime.fromtimestamp(b, UTC).isoformat()))  # fmt: skip
    factors = sorted({t for r in records for t in r.treatments})
    Store(tmp_path / "s.db").import_campaign(
        CampaignDef(name="g", factors=factors, design=IMPORTED), placed
    )
    return tmp_path / "s.db"


PAIR = {"runs": ["r0", "r1"], "nodes": ["node1", "node1"], "boot_id": "B", "kind": "same_node"}


@pytest.mark.slow
def test_analyze_carries_the_pairs_in_its_json(tmp_path: Path) -> None:
    """A campaign's runs that overlapped on one node are in analyze's result (and warned);
    a dataset CSV's runs are not judged."""
    db = _campaign(tmp_path)
    with pytest.warns(UserWarning, match="r0@node1"):
        got = api.analyze("g", store=db, seed=0)["shared_hosts"]
    assert got["judged"] == 119 and got["namespace_pairs"] == 0 and got["pairs"] == [PAIR]
    csv = api.analyze(str(ROOT / "tests" / "golden" / "dataset.csv"), seed=0)["shared_hosts"]
    assert csv["judged"] == 0 and csv["warning"] is None


@pytest.mark.slow
def test_the_report_carries_the_pairs_in_its_json_and_page(tmp_path: Path) -> None:
    db = _campaign(tmp_path)
    with pytest.warns(UserWarning, match="r0@node1"):
        page = api.report("g", store=db, out_dir=tmp_path / "r")
    got = json.loads((page.parent / "analysis.json").read_text())["shared_hosts"]
    assert got["pairs"] == [PAIR] and "r0@node1+r1@node1" in got["warning"]
    assert "r0@node1+r1@node1" in page.read_text()
