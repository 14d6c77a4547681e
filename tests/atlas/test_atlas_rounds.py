"""A step whose confirming gate ends undecided is not dropped: it stays queued, and the gate
runs another round (twice the runs a side, half the level, so the rounds together keep a
false step under alpha) until one decides, the rounds are spent, or --max-time runs out
(the next update goes on). The runs are simulated; the gate's verdict is scripted by the
round's size, so the test does not depend on a noisy draw."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from atlasrepo import BROKEN, PLANTED, SCORE, declared, make_repo, private_home  # noqa: F401

from perflab.atlas import gate
from perflab.atlas.define import init
from perflab.atlas.measure import Simulated
from perflab.atlas.project import Benchmark, benchmark
from perflab.atlas.steps import ROUNDS, round_plan, rounds_done
from perflab.atlas.store import Store
from perflab.atlas.triage import lines, status
from perflab.atlas.update import update


@dataclass
class Hesitant(Simulated):
    """A confirmation round of fewer than ``decides_at`` runs a side is inconclusive
    (``on_undecided`` hears it); the bisection's comparisons are the simulation's own."""

    decides_at: int = 24
    on_undecided: Any = None
    rounds: list[int] = field(default_factory=list)

    def compare(self, bench: Benchmark, a: str, b: str, level: float, min_effect: float,
                n_max: int | None = None) -> dict[str, Any]:  # fmt: skip
        got = super().compare(bench, a, b, level, min_effect, n_max)
        if n_max is None:
            return got
        self.rounds.append(n_max)
        if n_max >= self.decides_at:
            return got
        if self.on_undecided:
            self.on_undecided()
        return {**got, "verdict": "inconclusive"}


def test_the_rounds_double_the_runs_and_keep_their_levels_under_alpha() -> None:
    plans = [round_plan(0.05, 4, r) for r in range(ROUNDS)]
    assert [n for _, n in plans] == [12 * 2**r for r in range(ROUNDS)]
    assert sum(level for level, _ in plans) < 0.05
    legacy = {"confirm": {"verdict": "inconclusive", "ratio": 1.05}}
    assert len(rounds_done(legacy)) == 1 and rounds_done({"confirm": {"verdict": "slower"}}) == []


@pytest.fixture
def atlas(tmp_path: Path) -> tuple[Path, Path, list[str]]:
    repo = tmp_path / "repo"
    shas = make_repo(repo)
    d = tmp_path / "atlas"
    init(d, repo, "toyatlas", benchmark("score", SCORE, None, None, "us_per_task"))
    return repo, d, shas


def _hesitant(repo: Path, shas: list[str], **kw: Any) -> Hesitant:
    return Hesitant(lambda k: declared(repo, k), seed=3, broken=frozenset({shas[BROKEN]}), **kw)


def _steps(d: Path) -> list[Any]:
    store = Store(d)
    try:
        return store.steps("score")
    finally:
        store.close()


def test_an_undecided_step_is_queued_and_the_next_update_decides_it(
    atlas: tuple[Path, Path, list[str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    repo, d, shas = atlas
    # the first undecided round spends the update's time: the next round waits
    base, late = time.monotonic(), [0.0]
    monkeypatch.setattr(gate, "time", SimpleNamespace(monotonic=lambda: base + late[0]))
    first = update(d, max_time_s=600, measurer=_hesitant(repo, shas,
                   on_undecided=lambda: late.__setitem__(0, 1e6)))  # fmt: skip
    waiting = [s for s in _steps(d) if s.state == "undecided"]
    assert len(waiting) == 1 and waiting[0].data["retry"] is True
    assert any("steps to confirm" in q for q in first.queued), first.queued
    store = Store(d)
    text = "\n".join(lines(status(d, store, ["score"])))
    store.close()
    assert f"round 1 of {ROUNDS} inconclusive" in text and "queued: round 2" in text, text

    late[0] = 0.0
    m = _hesitant(repo, shas)
    second = update(d, max_time_s=600, measurer=m)
    assert second.queued == [] and 24 in m.rounds
    done = {s.id: s for s in _steps(d)}
    again = done[waiting[0].id]
    assert again.state in ("named", "fixed"), again.data
    assert [r["n_max"] for r in again.data["rounds"]] == [12, 24]
    assert [r["level"] for r in again.data["rounds"]] == pytest.approx([0.025, 0.0125])
    named = {c["sha"] for s in done.values() for c in s.data.get("culprits", [])}
    assert named == {shas[k] for k in PLANTED}


def test_a_step_undecided_in_every_round_ends_undecided_and_is_not_retried(
    atlas: tuple[Path, Path, list[str]],
) -> None:
    repo, d, shas = atlas
    m = _hesitant(repo, shas, decides_at=10**6)
    out = update(d, measurer=m)
    steps = _steps(d)
    assert steps and all(s.state == "undecided" and s.data["retry"] is False for s in steps)
    assert all(len(s.data["rounds"]) == ROUNDS for s in steps) and out.queued == []
    m2 = _hesitant(repo, shas, decides_at=10**6)
    assert update(d, measurer=m2).runs == 0 and m2.rounds == []
