"""``campaign extend --precision PCT [--max-time]``: more runs of the sets already planned,
as many as the runs stored predict for the widest effect, printed before they are stored; a
plan past --max-time, a target met already, exact data or a clashing option is one line,
exit 2, nothing stored. Cheap: a ``--command`` campaign run once per module, in process."""

from __future__ import annotations

import json
import sqlite3
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from click.testing import Result

from homecli import cli, command_campaign, last_json
from perflab.analysis.reach import more_per_set, reach

#: a halves the score, b does nothing; log-normal noise of sd 0.05
SCORE = (
    "import math, os, random\n"
    "t = set(os.environ['PERFLAB_TREATMENTS'].split(','))\n"
    "print(1000 * (0.5 if 'a' in t else 1.0) * math.exp(random.gauss(0, 0.05)))\n"
)


@pytest.fixture(scope="module")
def ran(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A 2² full factorial of the score, 3 runs per set, run."""
    work = tmp_path_factory.mktemp("extend")
    db = command_campaign(work, SCORE, "a,b", 3, python="python3")
    assert cli(work, "campaign", "run", "p", "--store", db).exit_code == 0
    return work / "s.db"


@pytest.fixture
def store(ran: Path, tmp_path: Path) -> str:
    """The run campaign's store, a copy of its own for each test."""
    with sqlite3.connect(ran) as src, sqlite3.connect(tmp_path / "s.db") as dst:
        src.backup(dst)  # the store's write-ahead log too
    return str(tmp_path / "s.db")


def planned(store: str) -> list[tuple[str, int]]:
    with sqlite3.connect(store) as db:
        return db.execute("SELECT treatments, replicate FROM planned ORDER BY seq").fetchall()


def one_line_exit_2(res: Result, *words: str) -> None:
    lines = res.output.strip().splitlines()
    assert res.exit_code == 2 and len(lines) == 1, res.output
    assert all(w in lines[0] for w in words), lines[0]


def test_it_plans_each_sets_runs_from_the_stored_ones_and_keeps_the_target(
    tmp_path: Path, store: str
) -> None:
    before = last_json(cli(tmp_path, "campaign", "status", "p", "--precision", "2%",
                           "--store", store, "--json"))["precision"]  # fmt: skip
    want, hw = more_per_set(before)
    res = cli(tmp_path, "campaign", "extend", "p", "--precision", "2%", "--store", store,
              "--json", "--seed", "3")  # fmt: skip
    rec = last_json(res)
    assert rec["runs"] == sum(want.values()) == rec["counts"]["planned"] - 12
    assert rec["expected_half_width"] == pytest.approx(hw) and hw <= 0.02 * 1.05
    new = planned(store)[12:]
    got = Counter("base" if not json.loads(t) else ",".join(json.loads(t)) for t, _ in new)
    assert dict(got) == want  # equal sets: the same number of runs each
    assert min(r for _, r in new) > max(r for _, r in planned(store)[:12])  # new blocks
    st = last_json(cli(tmp_path, "campaign", "status", "p", "--store", store, "--json"))
    assert st["precision"]["target"] == 0.02  # stored: status and the report measure to it


def test_the_plan_is_printed(tmp_path: Path, store: str) -> None:
    res = cli(tmp_path, "campaign", "extend", "p", "--precision", "3%", "--store", store)
    assert res.exit_code == 0, res.output
    text = " ".join(res.output.split())
    assert "plan for ±3.0% on every effect: " in text and "expected CI ±" in text
    assert "(predicted; now ±" in text and "run them with: perflab campaign run p" in text


def test_a_plan_past_max_time_is_refused_and_nothing_stored(tmp_path: Path, store: str) -> None:
    res = cli(tmp_path, "campaign", "extend", "p", "--precision", "0.5%", "--max-time", "1",
              "--store", store)  # fmt: skip
    one_line_exit_2(res, "±0.5% would take ~", "more runs of 4 sets", "--max-time 1 s")
    assert len(planned(store)) == 12
    st = last_json(cli(tmp_path, "campaign", "status", "p", "--store", store, "--json"))
    assert st["precision"]["target"] == 0.05  # the default: no target was stored


def test_what_it_cannot_plan_is_one_line(tmp_path: Path, store: str) -> None:
    res = cli(tmp_path, "campaign", "extend", "p", "--precision", "60%", "--store", store)
    one_line_exit_2(res, "within ±60.0% already", "nothing to plan")
    res = cli(tmp_path, "campaign", "extend", "p", "--precision", "2%", "--runs", "2",
              "--store", store)  # fmt: skip
    one_line_exit_2(res, "drop --runs")
    res = cli(tmp_path, "campaign", "extend", "p", "--precision", "2%", "--factors", "c",
              "--store", store)  # fmt: skip
    one_line_exit_2(res, "drop --factors")
    res = cli(tmp_path, "campaign", "extend", "p", "--precision", "lots", "--store", store)
    one_line_exit_2(res, "--precision")
    assert len(planned(store)) == 12


def test_exact_data_are_refused(tmp_path: Path) -> None:
    db = str(tmp_path / "e.db")
    cli(tmp_path, "campaign", "create", "e", "--command", "echo 1000", "--factors", "a",
        "--metric", "us_per_task",
        "--design", "full", "--runs", "2", "--store", db)  # fmt: skip
    assert cli(tmp_path, "campaign", "run", "e", "--store", db).exit_code == 0
    res = cli(tmp_path, "campaign", "extend", "e", "--precision", "2%", "--store", db)
    one_line_exit_2(res, "exact data")


def test_unequal_sets_grow_in_proportion_and_reach_the_target() -> None:
    """Sets of 2, 4 and 6 runs: each grows by the same factor, and the effects' half-width
    with the runs added (from the same spread) is within the target."""
    rng = np.random.default_rng(0)
    n = [2, 4, 6]
    x = np.repeat(np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0]]), n, axis=0)
    y = np.exp(rng.normal(0, 0.05, len(x)))
    p = reach(y, x, ["a", "b"], 10.0, 0.03)
    more, hw = more_per_set(p)
    grow = [more[s["set"]] / s["runs"] for s in p["sets"]]
    assert max(grow) - min(grow) <= 1 / min(n) + 1e-9 and hw is not None and hw <= 0.03
    # what reach says once the runs are there with the same spread per set
    bigger = [s["runs"] + more[s["set"]] for s in p["sets"]]
    sd = p["pooled_sd_log"]
    x2 = np.repeat(np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0]]), bigger, axis=0)
    y2 = np.concatenate([np.exp(sd * _unit(k)) for k in bigger])
    after = reach(y2, x2, ["a", "b"], 10.0, 0.03)
    assert max(e["half_width"] for e in after["effects"]) <= 0.03 * 1.05


def _unit(k: int) -> np.ndarray:
    """k values of mean 0 and sd exactly 1."""
    z = np.linspace(-1, 1, k)
    return (z - z.mean()) / z.std(ddof=1) if k > 1 else np.zeros(1)
