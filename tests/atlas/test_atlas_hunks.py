"""A culprit's hunk groups measured: with real runs, reverting the one changed constant of a
planted slow commit undoes its whole step (share about 1); with simulated runs, an update that
runs out of time between groups leaves the rest queued and the next update measures only
them."""

from __future__ import annotations

import re
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from atlasrepo import (  # noqa: F401
    PLANTED,
    SCORE,
    make_atlas,
    make_repo,
    private_home,
    reverted_cost,
    simulated,
)

from perflab.atlas import gate
from perflab.atlas.culprits import hunks as listed
from perflab.atlas.gate import Clock
from perflab.atlas.hunks import mark, measure
from perflab.atlas.measure import RealMeasurer
from perflab.atlas.project import benchmark
from perflab.atlas.store import Store
from perflab.atlas.triage import lines, status
from perflab.atlas.update import update


def test_a_real_revert_of_the_changed_constant_undoes_the_step(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    shas = make_repo(repo, n=16)  # commit 15 makes COST 1.3 times larger
    culprit: dict[str, Any] = {
        "sha": shas[15], "before": shas[14], "ratio": PLANTED[15],
        "hunks": mark(listed(repo, "toyatlas", shas[14], shas[15])),
    }  # fmt: skip
    d = tmp_path / "store"
    d.mkdir(mode=0o700)
    store = Store(d, create=True)
    bench = benchmark("score", SCORE, None, None, "us_per_task", runs=3)
    m = RealMeasurer(repo, "toyatlas", "tree")
    assert measure(store, m, bench, repo, "toyatlas", culprit, 0.05, Clock(None))
    (cost,) = [h for h in culprit["hunks"] if h["units"] == ["toyatlas.core:COST"]]
    assert cost["verdict"] == "faster", cost
    assert cost["ratio"] == pytest.approx(1 / PLANTED[15], rel=0.05)
    assert cost["share_low"] <= 1 <= cost["share_high"]
    assert measure(store, m, bench, repo, "toyatlas", culprit, 0.05, Clock(None)) is False
    store.close()


def test_hunks_left_at_max_time_are_queued_and_measured_next(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo, d, shas = make_atlas(tmp_path)
    sim = simulated(repo, shas, 11)
    reverted, late = reverted_cost(repo), [0.0]

    def first_revert_spends_the_time(key: str, transforms: list[dict[str, Any]]) -> float:
        late[0] = 1e6
        return float(reverted(key, transforms))

    sim.reverted = first_revert_spends_the_time
    base = time.monotonic()
    monkeypatch.setattr(gate, "time", SimpleNamespace(monotonic=lambda: base + late[0]))
    first = update(d, max_time_s=600, measurer=sim)
    assert any(re.search(r"[1-9] steps' hunks to measure", q) for q in first.queued), first.queued
    store = Store(d)
    text = "\n".join(lines(status(d, store, ["score"])))
    store.close()
    assert "to be measured (queued)" in text and ": share " in text, text

    late[0] = 0.0
    sim.reverted = reverted
    second = update(d, max_time_s=600, measurer=sim)
    assert second.queued == [] and second.new_points == 0
    store = Store(d)
    steps = store.steps("score")
    store.close()
    groups = [h for s in steps for c in s.data.get("culprits", []) for h in c["hunks"]]
    assert len(groups) == len(PLANTED) and all("share" in h for h in groups), groups
