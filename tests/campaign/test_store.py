"""The store's per-run and status queries use indexes: their cost does not grow with the
runs stored in other campaigns (or, for status, with the campaign's own size)."""

from __future__ import annotations

from pathlib import Path

import pytest

from perflab.campaign.plan import _recent_durations, create_ordered, status
from perflab.campaign.store import Store
from perflab.run.record import RunRecord
from perflab.spec import RunSpec

QUERIES = {
    "pending": "SELECT p.seq FROM planned p LEFT JOIN runs r ON r.campaign = p.campaign "
    "AND r.seq = p.seq WHERE p.campaign = 'x' AND r.run_id IS NULL ORDER BY p.seq",
    "counts": "SELECT status, COUNT(*) FROM runs WHERE campaign='x' GROUP BY status",
    "recent": "SELECT started_at FROM runs WHERE campaign='x' ORDER BY started_at DESC LIMIT 9",
    "best": "SELECT treatments FROM runs WHERE campaign='x' AND status='ok' "
    "ORDER BY us_per_task LIMIT 1",
}


def _store(tmp_path: Path, runs: int) -> Store:
    store = Store(tmp_path / "s.db")
    create_ordered(
        store, "c", RunSpec(metric="us_per_task", command="echo 1"), [], [[] for _ in range(runs)]
    )
    items: list[tuple[RunRecord, int | None]] = []
    for seq in range(runs):
        rec = RunRecord(
            run_id=f"r{seq:04d}",
            campaign="c",
            started_at=f"2026-01-01T00:{seq // 60:02d}:{seq % 60:02d}.000+00:00",
            ended_at=f"2026-01-01T00:{seq // 60:02d}:{seq % 60:02d}.500+00:00",
            target="command",
            workload=None,
            status="ok",
            us_per_task=float(1000 - seq),
        )
        items.append((rec, seq))
    store.add_runs(items)
    return store


@pytest.mark.parametrize("name", list(QUERIES))
def test_per_run_and_status_queries_search_an_index_never_scan_the_runs(
    name: str, tmp_path: Path
) -> None:
    store = _store(tmp_path, 3)
    plan = " ".join(r[3] for r in store.db.execute("EXPLAIN QUERY PLAN " + QUERIES[name]))
    assert "SEARCH" in plan and "SCAN" not in plan, plan
    assert "TEMP B-TREE" not in plan, plan  # no sort of the campaign's rows either


def test_status_eta_from_the_latest_runs_and_the_best(tmp_path: Path) -> None:
    store = _store(tmp_path, 150)
    # the latest runs first, each 0.5 s long, at most the asked number
    assert _recent_durations(store, "c", 100) == [0.5] * 100
    st = status(store, "c")
    assert st["counts"]["done"] == 150 and st["eta_s"] == 0.0
    assert st["best"]["us_per_task"] == pytest.approx(851.0)
    assert [r["seq"] for r in st["latest"]] == [149, 148, 147, 146, 145]
