"""The goal of the fastest set asked at ``campaign create --fastest`` (stored: ``campaign
run`` uses it untold, ``status`` says it; replaced by ``run --fastest`` only before the first
run), ``campaign extend --precision`` leaving out the sets out of the running, and exact sets
(runs all equal) said as a value, not as a zero-width interval. Cheap: ``--command``
campaigns, in process."""

from __future__ import annotations

import json
import math
import sqlite3
from collections import Counter
from pathlib import Path

import pytest

from homecli import cli, command_campaign, cycling_score, last_json
from perflab.campaign import running

#: 'slow' is twice the base; both spread ±2 % in a fixed cycle (a counter file), so the run
#: is the same every time: 'slow' is out of the running at the first look (3 blocks)
SCORE = cycling_score("(2000.0 if 'slow' in t else 1000.0) * (1.0, 1.02, 0.98, 1.01, 0.99)[n % 5]")
#: Deterministic: every run of a set prints the same value.
EXACT = (
    "import os\n"
    "t = set(filter(None, os.environ['PERFLAB_TREATMENTS'].split(',')))\n"
    "print(2000.0 if 'slow' in t else 1000.0)\n"
)


def definition(db: str) -> dict:
    with sqlite3.connect(db) as c:
        (body,) = c.execute("SELECT definition FROM campaigns").fetchone()
    return dict(json.loads(body))


@pytest.fixture(scope="module")
def ran(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``campaign create p --fastest`` (base and 'slow', 8 runs a set), then ``campaign run
    p`` without --fastest."""
    home = tmp_path_factory.mktemp("goal")
    db = command_campaign(home, SCORE, "slow", 8, "python3 -S", "--fastest")
    assert cli(home, "campaign", "run", "p", "--store", db).exit_code == 0
    return home / "s.db"


@pytest.fixture
def store(ran: Path, tmp_path: Path) -> str:
    """The run campaign's store, a copy of its own for each test."""
    with sqlite3.connect(ran) as src, sqlite3.connect(tmp_path / "s.db") as dst:
        src.backup(dst)
    return str(tmp_path / "s.db")


def test_the_goal_asked_at_create_is_stored_and_run_uses_it_untold(
    tmp_path: Path, store: str
) -> None:
    assert definition(store)["design_info"]["fastest"] == {"threshold": 0.05, "alpha": 0.05}
    st = last_json(cli(tmp_path, "campaign", "status", "p", "--store", store, "--json"))
    assert st["goal"] == "fastest" and st["out_of_running"]["threshold"] == 0.05
    (stop,) = st["stopped"]  # run without --fastest stopped 'slow' at the first look
    assert stop["set"] == "slow" and stop["runs"] == 3 and stop["not_needed"] == 5
    assert stop["reason"].startswith("out of the running: ")
    text = " ".join(cli(tmp_path, "campaign", "status", "p", "--store", store).output.split())
    assert "goal: the fastest set; out of the running: a set stops once" in text


def test_create_says_the_goal_and_a_campaign_without_it_has_none(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    db = command_campaign(tmp_path / "a", SCORE, "slow", 4, "python3 -S", "--fastest",
                          "--min-effect", "0.1", "--alpha", "0.01")  # fmt: skip
    assert definition(db)["design_info"]["fastest"] == {"threshold": 0.1, "alpha": 0.01}
    res = cli(tmp_path, "campaign", "create", "q", "--command", "true", "--factors", "x",
              "--metric", "us_per_task",
              "--design", "full", "--fastest", "--store", db)  # fmt: skip
    assert res.exit_code == 0, res.output
    assert "goal: the fastest set; out of the running: " in " ".join(res.output.split())
    plain = command_campaign(tmp_path / "b", SCORE, "slow", 4)
    st = last_json(cli(tmp_path, "campaign", "status", "p", "--store", plain, "--json"))
    assert st["goal"] == "effects" and st["out_of_running"] is None
    assert "goal:" not in cli(tmp_path, "campaign", "status", "p", "--store", plain).output


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--min-effect", "0.1"], "--min-effect and --alpha go with --fastest"),
        (["--alpha", "0.1"], "--min-effect and --alpha go with --fastest"),
        (["--fastest", "--min-effect", "1"], "--min-effect 1: a fraction between 0 and 1"),
        (["--fastest", "--alpha", "0"], "--alpha 0: a rate between 0 and 1"),
    ],
)
def test_bad_goals_at_create_are_one_line_and_store_nothing(
    tmp_path: Path, args: list[str], says: str
) -> None:
    db = str(tmp_path / "s.db")
    res = cli(tmp_path, "campaign", "create", "p", "--command", "true", "--factors", "x",
              "--metric", "us_per_task",
              "--design", "full", "--store", db, *args)  # fmt: skip
    assert res.exit_code == 2 and res.output.strip().count("\n") == 0, res.output
    assert says in res.output and "Traceback" not in res.output
    if Path(db).exists():
        with sqlite3.connect(db) as c:
            assert c.execute("SELECT COUNT(*) FROM campaigns").fetchone() == (0,)


def test_run_fastest_replaces_the_created_goal_only_before_the_first_run(tmp_path: Path) -> None:
    db = command_campaign(tmp_path, SCORE, "slow", 4, "python3 -S", "--fastest")
    res = cli(tmp_path, "campaign", "run", "p", "--fastest", "--min-effect", "0.1",
              "--max-runs", "1", "--store", db)  # fmt: skip
    assert res.exit_code == 0, res.output
    assert definition(db)["design_info"]["fastest"] == {"threshold": 0.1, "alpha": 0.05}
    res = cli(tmp_path, "campaign", "run", "p", "--fastest", "--min-effect", "0.2", "--store", db)
    assert res.exit_code == 2 and "already stops sets out of the running at --min-effect 0.1" in (
        res.output
    )
    assert definition(db)["design_info"]["fastest"]["threshold"] == 0.1


def test_extend_precision_plans_only_for_the_sets_in_the_running(
    tmp_path: Path, store: str
) -> None:
    res = cli(tmp_path, "campaign", "extend", "p", "--precision", "1%", "--seed", "2",
              "--store", store, "--json")  # fmt: skip
    rec = last_json(res)
    assert rec["left_out"] == ["slow"] and "out of the running" in rec["left_out_line"]
    with sqlite3.connect(store) as c:
        pending = c.execute(
            "SELECT p.treatments FROM planned p LEFT JOIN runs r ON "
            "r.campaign = p.campaign AND r.seq = p.seq WHERE r.seq IS NULL"
        )
        got = Counter(",".join(json.loads(t)) for (t,) in pending)
    assert got == {"": rec["runs"]} and rec["runs"] > 0 and rec["sets"] == 1
    # predicted with 'slow' kept at its 3 runs: its effect cannot reach ±1 %, and says so
    assert rec["expected_half_width"] > 0.01
    st = last_json(cli(tmp_path, "campaign", "status", "p", "--store", store, "--json"))
    assert max(e["half_width_at_plan_end"] for e in st["precision"]["effects"]) == (
        pytest.approx(rec["expected_half_width"])
    )


def test_extend_precision_says_what_it_left_out(tmp_path: Path, store: str) -> None:
    res = cli(tmp_path, "campaign", "extend", "p", "--precision", "1%", "--store", store)
    assert res.exit_code == 0, res.output
    text = " ".join(res.output.split())
    assert "left out 1 set stopped as out of the running" in text and ": slow" in text
    assert " more runs (1 set, " in text


def test_an_exact_set_is_said_as_its_value_not_a_zero_width_interval(tmp_path: Path) -> None:
    db = command_campaign(tmp_path, EXACT, "slow", 8, "python3 -S", "--fastest")
    counts = last_json(cli(tmp_path, "campaign", "run", "p", "--store", db, "--json"))
    (stop,) = counts["stopped"]
    assert stop["reason"].startswith(
        "out of the running: 2,000 (exact: no spread in 3 runs) lies above the best set "
        "base's 1,000 (exact: no spread in 3 runs) by ×2.000"
    ), stop["reason"]
    assert "–" not in stop["reason"].split(" by ")[0]  # no "2,000–2,000"
    (note,) = definition(db)["design_info"]["not_needed"]
    assert (
        note["exact"] is True
        and note["interval"] is None
        and note["value"] == pytest.approx(2000.0, rel=1e-12)
    )
    assert note["best_exact"] is True and note["best_interval"] is None
    assert note["best_value"] == pytest.approx(1000.0, rel=1e-12) and note["best_runs"] == 3


def test_judge_flags_exact_sets_and_reason_reads_old_notes() -> None:
    logs = {"": [math.log(1000.0)] * 3, "s": [math.log(2000.0)] * 3, "n": [9.0, 9.01, 9.02]}
    found = running.judge(logs, {"s", "n"}, 0.99, 0.05)
    assert found["s"]["exact"] and found["s"]["value"] == pytest.approx(2000.0)
    assert found["n"]["exact"] is False and found["n"]["interval"][0] < found["n"]["interval"][1]
    # a note stored before the flag: its zero-width interval is read as exact
    old = {k: v for k, v in found["s"].items() if k not in ("exact", "value", "best_exact",
                                                            "best_value", "best_runs")}  # fmt: skip
    old.update(interval=[2000.0, 2000.0], best_interval=[1000.0, 1000.0], why="out of the "
               "running", runs=3, threshold=0.05, look=1, block=3, level=0.0167)  # fmt: skip
    said = running.reason(old)
    assert (
        "2,000 (exact: no spread in 3 runs)" in said and "base's 1,000 (exact: no spread)" in said
    )
    assert running.reason({"why": "known", "runs": 2, "half_width": 0.0}) == (
        "known: exact (no spread in 2 runs)"
    )
    assert running.reason({"why": "known", "runs": 4, "half_width": 0.031, "exact": False}) == (
        "known: ±3.1% reached in 4 runs"
    )
