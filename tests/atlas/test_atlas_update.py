"""``atlas update`` on a synthetic repository of 60 commits with three planted steps (a
regression at 15 fixed at 19, a regression at 40) and an unbuildable commit: the first update
names each step's commit, links the fix, skips the broken commit and names it; a second
update after more commits measures only the new ones and names the new step. The runs are
simulated from each commit's declared cost (the atlas's own logic under test; the real
measurement is tested in test_atlas_cli.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from atlasrepo import APPENDED, BROKEN, PLANTED, SCORE, declared, grow, make_repo, private_home  # noqa: F401

from perflab.atlas.define import add, init
from perflab.atlas.measure import Failed, Simulated
from perflab.atlas.pr import verdicts
from perflab.atlas.project import Benchmark, benchmark
from perflab.atlas.store import Store
from perflab.atlas.update import update


def simulated(repo: Path, shas: list[str], seed: int) -> Simulated:
    cache: dict[str, float] = {}

    def cost(key: str) -> float:
        if key not in cache:
            cache[key] = declared(repo, key)
        return cache[key]

    return Simulated(cost, seed=seed, broken=frozenset({shas[BROKEN]}))


def make(tmp_path: Path) -> tuple[Path, Path, list[str]]:
    repo = tmp_path / "repo"
    shas = make_repo(repo)
    d = tmp_path / "atlas"
    init(d, repo, "toyatlas", benchmark("score", SCORE, None, None, "us_per_task"))
    return repo, d, shas


def named(d: Path) -> dict[str, Any]:
    store = Store(d)
    steps = store.steps("score")
    store.close()
    return {c["sha"]: s for s in steps for c in s.data.get("culprits", [])}


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_first_update_names_the_planted_steps_and_links_the_fix(
    tmp_path: Path, seed: int
) -> None:
    repo, d, shas = make(tmp_path)
    out = update(d, measurer=simulated(repo, shas, seed))
    assert out.new_points == 60 and out.queued == []
    got = named(d)
    assert set(got) == {shas[k] for k in PLANTED}, [s.to_dict() for s in got.values()]
    reg, fix, other = (got[shas[k]] for k in sorted(PLANTED))
    assert (reg.direction, fix.direction, other.direction) == ("slower", "faster", "slower")
    assert reg.state == "fixed" and reg.link == fix.id and fix.link == reg.id
    assert other.state == "named" and other.link is None
    assert out.skipped == {"score": {shas[BROKEN]: "does not build: planted"}}
    culprit = other.data["culprits"][0]
    assert (
        culprit["pr"] == 140
        and culprit["hunks"]
        and culprit["share_low"] <= 1 <= culprit["share_high"]
    )


def test_a_second_update_measures_only_new_commits_and_names_the_new_step(tmp_path: Path) -> None:
    repo, d, shas = make(tmp_path)
    m = simulated(repo, shas, 5)
    update(d, measurer=m)
    again = update(d, measurer=m)
    assert again.new_points == 0 and again.runs == 0 and again.measured == {}
    new = grow(repo, 60, 80, APPENDED, broken=None)
    out = update(d, measurer=simulated(repo, shas, 6))
    assert out.new_points == 20 and sorted(out.measured["score"]) == sorted(new)
    assert out.runs >= 20 * 4
    assert new[70 - 60] in named(d)


def test_max_time_queues_the_rest_and_the_next_update_goes_on(tmp_path: Path) -> None:
    repo, d, shas = make(tmp_path)
    m = simulated(repo, shas, 7)
    out = update(d, max_time_s=0.0, measurer=m)
    assert out.runs == 0 and out.queued and "queued for the next update" in out.queued[0]
    rest = update(d, measurer=m)
    assert rest.queued == [] and set(named(d)) == {shas[k] for k in PLANTED}


class Failing(Simulated):
    def run(self, bench: Benchmark, key: str) -> float:
        if bench.name == "broken":
            raise Failed(key, "run", "the command exited 1: ModuleNotFoundError")
        return super().run(bench, key)


def test_a_benchmark_failing_everywhere_is_said_and_the_update_goes_on(tmp_path: Path) -> None:
    repo, d, shas = make(tmp_path)
    add(d, benchmark("broken", "false", None, None, None))
    sim = simulated(repo, shas, 8)
    out = update(d, measurer=Failing(sim.cost, seed=8, broken=sim.broken))
    assert "fails on every commit" in out.failing["broken"]
    assert "broken" not in out.measured and len(out.measured["score"]) == 59
    store = Store(d)
    assert store.steps("broken") == [] and len(store.failures("broken")) == 3
    store.close()


def test_pr_gives_a_verdict_per_benchmark_as_markdown(tmp_path: Path) -> None:
    repo, d, shas = make(tmp_path)
    md = verdicts(d, shas[40], shas[39], measurer=simulated(repo, shas, 9))
    assert "| score | 🔴 slower |" in md and shas[40][:10] in md
    md = verdicts(d, shas[45], shas[44], measurer=simulated(repo, shas, 9))
    assert "| score | ⚪ no difference |" in md


def _reverted(repo: Path) -> Any:
    """A reverted hunk group's true cost: its ``set_constant`` of COST, else the commit's."""

    def cost(key: str, transforms: list[dict[str, Any]]) -> float:
        consts = [t["expr"] for t in transforms
                  if t["op"] == "set_constant" and t["name"] == "COST"]  # fmt: skip
        return float(consts[-1]) if consts else declared(repo, key)

    return cost


def test_a_culprits_hunks_are_measured_with_shares_and_intervals(tmp_path: Path) -> None:
    from perflab.atlas.triage import lines, status

    repo, d, shas = make(tmp_path)
    sim = simulated(repo, shas, 4)
    sim.reverted = _reverted(repo)
    out = update(d, measurer=sim)
    assert any("hunks of" in c and "measured" in c for c in out.changed), out.changed
    culprit = named(d)[shas[40]].data["culprits"][0]
    (cost,) = [h for h in culprit["hunks"] if h["units"] == ["toyatlas.core:COST"]]
    # reverting the one changed constant undoes the whole step
    assert cost["verdict"] == "faster" and cost["share_low"] <= 1 <= cost["share_high"]
    assert 0.5 < cost["share"] < 1.5 and "to_measure" not in cost
    store = Store(d)
    text = "\n".join(lines(status(d, store, ["score"])))
    store.close()
    assert "hunk toyatlas.core:COST: share" in text, text
    from perflab.atlas.project import load
    from perflab.atlas.site import publish

    store = Store(d)
    publish(load(d), store, tmp_path / "site")
    page = (tmp_path / "site" / f"step-{named(d)[shas[40]].id}.html").read_text()
    store.close()
    assert "share (interval)" in page and f"{cost['share']:.0%} (" in page
    again = update(d, measurer=sim)
    assert again.runs == 0 and not any("hunks of" in c for c in again.changed)
