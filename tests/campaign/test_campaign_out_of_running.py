"""``campaign run --fastest``: a set clearly slower than the best stops, its remaining runs
not needed (``campaign/running.py``). Its error rate over many simulated campaigns (a set
within the threshold of the fastest is stopped at most at the stated α, with the binomial
interval), a clearly slower set stopping early on a ``--command`` campaign (status, a resumed
run, ``--json`` and the report agreeing), the progress bar's total, and bad input."""

from __future__ import annotations

import io
import json
import math
import sqlite3
from pathlib import Path

import numpy as np
import pytest
from rich.console import Console

from homecli import cli, command_campaign, last_json
from perflab.analysis.stats import clopper_pearson
from perflab.campaign import running
from perflab.campaign.source import open_source
from perflab.report import campaign_text, terminal

#: The simulated campaigns: true mean log metric per set. "edge" is exactly the threshold
#: slower than the fastest (the hardest set not to stop wrongly), "near" within it; "slow"
#: and "slower" are clearly out of the running.
TRUTH = {"": 0.0, "near": 0.02, "edge": math.log1p(0.05), "slow": 0.4, "slower": 0.7}
WITHIN = {"", "near", "edge"}  # within the threshold of the fastest: never to be stopped
SIGMA = 0.1  # 10 % run-to-run spread (log)
BLOCKS = 12
CAMPAIGNS = 240


def simulate(
    g: running.Goal, rng: np.random.Generator, naive: bool = False
) -> tuple[set[str], dict[str, int]]:
    """One campaign of ``BLOCKS`` replicate blocks, looked at as ``stopping`` looks (runs of
    the blocks before each look; a set stopped earlier out of play): the sets stopped and
    the runs each made. ``naive``: the means alone (intervals of confidence 0), as a rule
    that spends nothing on the looks would."""
    y = {s: mu + SIGMA * rng.standard_normal(BLOCKS) for s, mu in TRUTH.items()}
    stopped: dict[str, int] = {}
    for block in range(1, BLOCKS):
        look = running.look_level(g, BLOCKS, block)
        if look is None:
            continue
        conf = 0.0 if naive else running.set_confidence(look[1], len(TRUTH))
        play = {s: list(v[:block]) for s, v in y.items() if s not in stopped}
        for s in running.judge(play, set(play), conf, g.threshold):
            stopped[s] = block
    return set(stopped), {s: stopped.get(s, BLOCKS) for s in TRUTH}


def test_a_set_within_the_threshold_is_stopped_at_most_at_the_stated_level() -> None:
    g = running.Goal(threshold=0.05, alpha=0.05)
    rng = np.random.default_rng(40)
    wrong, runs = 0, {s: 0 for s in TRUTH}
    for _ in range(CAMPAIGNS):
        stopped, made = simulate(g, rng)
        wrong += bool(stopped & WITHIN)
        runs = {s: runs[s] + made[s] for s in TRUTH}
    lo, hi = clopper_pearson(wrong, CAMPAIGNS)
    assert hi <= g.alpha, (wrong, lo, hi)  # the whole 95 % interval of the rate is ≤ α
    # and it is worth it: the clearly slower sets stop well before their 12 runs
    assert runs["slower"] / CAMPAIGNS < 7 and runs["slow"] / CAMPAIGNS < 10
    assert runs[""] == runs["edge"] == CAMPAIGNS * BLOCKS


def test_the_check_catches_a_rule_that_spends_nothing_on_looking() -> None:
    """The same check has teeth: a rule on the means alone stops the edge set far more
    often than α (the lower end of its binomial interval is above α)."""
    g = running.Goal(threshold=0.05, alpha=0.05)
    rng = np.random.default_rng(41)
    wrong = sum(bool(simulate(g, rng, naive=True)[0] & WITHIN) for _ in range(100))
    assert clopper_pearson(wrong, 100)[0] > g.alpha


def test_the_levels_add_up_to_alpha_however_many_blocks_are_added() -> None:
    g = running.Goal(0.05, 0.05)
    levels = [running.look_level(g, BLOCKS, b) for b in range(1, 10_000)]
    spent = [lv[1] for lv in levels if lv is not None]
    assert sum(spent) <= g.alpha + 1e-12
    assert running.look_level(g, BLOCKS, 2) is None  # before FIRST_LOOK: no look
    assert running.schedule(BLOCKS)[0][:4] == (3, 6, 10, 11)  # the plan's looks


#: 'slow' is twice as slow as the base, both with a 2 % spread: out of the running once
#: 3 blocks are in (the first look)
SCORE = (
    "import math, os, random\n"
    "t = set(filter(None, os.environ['PERFLAB_TREATMENTS'].split(',')))\n"
    "print((2000.0 if 'slow' in t else 1000.0) * math.exp(random.gauss(0, 0.02)))\n"
)


def made(home: Path) -> str:
    return command_campaign(home, SCORE, "slow", 8)


def test_a_clearly_slower_set_stops_early_and_every_view_agrees(tmp_path: Path) -> None:
    db = made(tmp_path)
    # --fastest is stored with the campaign: the run cut short and resumed without it keeps it
    first = last_json(cli(tmp_path, "campaign", "run", "p", "--fastest", "--max-runs", "2",
                          "--store", db, "--json"))  # fmt: skip
    assert first["done"] == 2 and first["not_needed"] == 0
    counts = last_json(cli(tmp_path, "campaign", "run", "p", "--store", db, "--json"))
    # looked at after 3 blocks (the first look): 'slow' out, its last 5 runs not needed
    assert counts["not_needed"] == 5 and counts["planned"] == 11 == counts["done"]
    (stop,) = counts["stopped"]
    assert stop["set"] == "slow" and stop["runs"] == 3 and stop["not_needed"] == 5
    assert stop["reason"].startswith("out of the running: ")
    assert "after 3 blocks: level 0.0167" in stop["reason"]  # α/3: the plan's 3 looks
    with sqlite3.connect(db) as c:
        runs = dict(c.execute("SELECT treatments, COUNT(*) FROM runs GROUP BY treatments"))
        (info,) = c.execute("SELECT json_extract(definition, '$.design_info') FROM campaigns")
    assert runs == {"": 8, "slow": 3}
    (note,) = json.loads(info[0])["not_needed"]
    assert note["why"] == "out of the running" and note["block"] == 3 and note["look"] == 1
    assert note["confidence"] == pytest.approx(1 - 0.05 / 3 / 2)
    assert note["ratio"] > 1.05 and note["interval"][0] > note["best_interval"][1] * 1.05
    # status, a resumed run and the report say the same
    st = last_json(cli(tmp_path, "campaign", "status", "p", "--store", db, "--json"))
    assert st["counts"] == {k: v for k, v in counts.items() if k != "stopped"}
    assert st["stopped"] == counts["stopped"] and st["eta_s"] == 0.0
    assert st["out_of_running"]["alpha"] == 0.05 and "at most 0.05" in st["out_of_running"]["line"]
    assert last_json(cli(tmp_path, "campaign", "run", "p", "--store", db, "--json")) == counts
    text = " ".join(cli(tmp_path, "campaign", "status", "p", "--store", db).output.split())
    assert "5 planned runs not needed (their sets known or out of the running)" in text
    assert "slow: 5 runs not needed, out of the running:" in text
    # what the report is handed (``write_report(stopped=…)``, tests/report): the same lines
    said = open_source("p", db).stopped
    assert said[0] == stop["line"] and "at most 0.05" in said[-1]


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--fastest", "--min-effect", "0"], "--min-effect 0: a fraction between 0 and 1"),
        (["--fastest", "--alpha", "1.5"], "--alpha 1.5: a rate between 0 and 1"),
        (["--min-effect", "0.1"], "--min-effect and --alpha go with --fastest"),
    ],
)
def test_bad_input_is_one_line_and_changes_nothing(
    tmp_path: Path, args: list[str], says: str
) -> None:
    db = made(tmp_path)
    with sqlite3.connect(db) as c:
        (before,) = c.execute("SELECT definition FROM campaigns").fetchone()
    res = cli(tmp_path, "campaign", "run", "p", *args, "--store", db)
    assert res.exit_code == 2 and res.output.strip().count("\n") == 0, res.output
    assert says in res.output and "Traceback" not in res.output
    with sqlite3.connect(db) as c:
        assert c.execute("SELECT definition FROM campaigns").fetchone() == (before,)
        assert c.execute("SELECT COUNT(*) FROM runs").fetchone() == (0,)


def test_another_goal_than_the_stored_one_is_refused(tmp_path: Path) -> None:
    db = made(tmp_path)
    assert cli(tmp_path, "campaign", "run", "p", "--fastest", "--max-runs", "1",
               "--store", db).exit_code == 0  # fmt: skip
    res = cli(tmp_path, "campaign", "run", "p", "--fastest", "--alpha", "0.1", "--store", db)
    assert res.exit_code == 2 and "already stops sets out of the running" in res.output


def test_the_progress_bar_total_drops_by_the_runs_not_needed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    out = io.StringIO()
    monkeypatch.setattr(terminal, "err_console", Console(file=out, width=120))
    with campaign_text.campaign_progress("p", 16, 0) as (start, _, less):
        start()
        less(5)
    assert "0/11" in out.getvalue() and "/16" not in out.getvalue().splitlines()[-1]
