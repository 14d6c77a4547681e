"""``perflab campaign extend``: a campaign grows by a factor (off in every earlier run,
recorded so) and by another design (sets already planned skipped), runs on, and analyses as
one dataset; bad extensions are one line, exit 2, nothing stored."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from conftest import perflab, perflab_json

SCORE = (
    "import os, random\n"
    "t = set(os.environ['PERFLAB_TREATMENTS'].split(','))\n"
    "s = 1000 - 300 * ('a' in t) - 100 * ('b' in t) - 150 * ('e' in t)\n"
    "print(s * random.uniform(0.98, 1.02))\n"
)


def _planned(db: str) -> list[tuple[int, str, int]]:
    import sqlite3

    with sqlite3.connect(db) as c:
        return list(c.execute("SELECT seq, treatments, replicate FROM planned ORDER BY seq"))


def test_a_campaign_extended_twice_analyses_as_one(tmp_path: Path) -> None:
    score = tmp_path / "score.py"
    score.write_text(SCORE)
    db = str(tmp_path / "s.db")
    st = ["--store", db]
    made = perflab_json(
        "campaign", "create", "x", "--command", f"python3 {score}", "--factors", "a,b,c",
        "--metric", "us_per_task",
        "--design", "random", "--design-opt", "runs=5", "--runs", "2", "--seed", "1", *st,
    )  # fmt: skip
    first = made["counts"]["planned"]
    assert perflab("campaign", "run", "x", *st, "--json").returncode == 0
    sets_before = {t for _, t, _ in _planned(db)}

    # 1. a factor: every planned set again with e added (exact pairs), e off before
    ext = perflab_json("campaign", "extend", "x", "--factors", "e", "--runs", "2", *st)
    assert ext["added_factors"] == ["e"] and ext["off_before"] is True
    assert ext["sets"] == len(sets_before) and ext["runs"] == 2 * len(sets_before)
    rows = _planned(db)
    added = rows[first:]
    assert {tuple(sorted(json.loads(t))) for _, t, _ in added} == {
        tuple(sorted([*json.loads(t), "e"])) for t in sets_before
    }
    assert min(r for *_, r in added) > max(r for *_, r in rows[:first])  # new blocks
    assert perflab("campaign", "run", "x", *st, "--json").returncode == 0

    # 2. another design: its sets over a,b,c,e, less those already planned
    n2 = len(_planned(db))
    ext2 = perflab_json(
        "campaign", "extend", "x", "--design", "sequences", "--design-opt", "sequences=2",
        "--seed", "3", *st,
    )  # fmt: skip
    assert ext2["design"] == "sequences" and ext2["sets"] == ext2["runs"] > 0
    planned_sets = [frozenset(json.loads(t)) for _, t, _ in _planned(db)]
    assert not set(planned_sets[n2:]) & set(planned_sets[:n2])
    assert perflab("campaign", "run", "x", *st, "--json").returncode == 0

    # one campaign: the status counts all, the definition records both extensions
    status = perflab_json("campaign", "status", "x", *st)
    total = first + ext["runs"] + ext2["runs"]
    assert status["counts"]["planned"] == status["counts"]["ok"] == total
    out = tmp_path / "x.csv"
    assert perflab("export", "x", "-o", str(out), *st).returncode == 0
    df = pd.read_csv(out, sep=";")
    assert len(df) == total
    assert {"a", "b", "c", "e"} <= set(df.columns)
    # e was off in every run before it was added, and on in the pairs planned for it
    order = df.sort_values("timestamp").reset_index(drop=True)
    assert order.loc[: first - 1, "e"].sum() == 0
    assert order.loc[first : first + ext["runs"] - 1, "e"].sum() == ext["runs"]
    a = perflab_json("analyze", "x", *st)
    assert a["dataset"]["runs"] == total and sorted(a["dataset"]["factors"]) == [
        "a",
        "b",
        "c",
        "e",
    ]
    e = a["factors"]["e"]
    assert e["n_pairs"] >= 4 * len(sets_before)  # 2 x 2 run pairs per planned set
    assert -200 < e["mean_delta_us"] < -100  # the truth: e saves 150


def test_bad_extensions_are_one_line_exit_2_and_store_nothing(tmp_path: Path) -> None:
    score = tmp_path / "score.py"
    score.write_text(SCORE)
    db = str(tmp_path / "s.db")
    st = ["--store", db]
    perflab_json(
        "campaign", "create", "x", "--command", f"python3 {score}", "--factors", "a,b",
        "--metric", "us_per_task",
        "--design", "full", *st,
    )  # fmt: skip
    before = _planned(db)
    for args, says in (
        (["--factors", "a"], "a already a factor of campaign 'x'"),
        (["--factors", "e,e"], "names a factor twice"),
        (["--design", "full"], "nothing new to plan"),
        (["--design", "sweep"], "conflicts with campaign 'x''s design 'full'"),
        (["--factors", "e", "--design", "full"], "either --factors or --design"),
        ([], "either --factors or --design"),
    ):
        proc = perflab("campaign", "extend", "x", *args, *st)
        assert proc.returncode == 2, (args, proc.stderr)
        lines = proc.stderr.strip().splitlines()
        assert len(lines) == 1 and says in lines[0], (args, proc.stderr)
    assert _planned(db) == before
    status = perflab_json("campaign", "status", "x", *st)
    assert status["counts"]["planned"] == len(before)
