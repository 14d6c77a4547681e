"""``campaign run`` of a campaign with a precision target stops each set once its interval
meets the set's share of the target (looked at before each replicate block, trusted from
half the set's planned runs on); the runs skipped are recorded as not needed, and status
and a resumed run count them alike. Cheap: a ``--command`` campaign whose spread is set
per treatment (a quiet set prints a fixed value, the base a widely spread one)."""

from __future__ import annotations

import json
import math
import sqlite3
from pathlib import Path

import pytest

from homecli import cli, command_campaign, cycling_score, last_json
from perflab.campaign import stopping
from perflab.campaign.definition import CampaignDef

#: 'a' is exact (a fixed value: known at its first look); the base cycles through values a
#: factor 1.4-4 apart (never known; a random spread could by chance give two close values)
SCORE = cycling_score("1000.0 if 'a' in t else (500.0, 2000.0, 700.0, 1500.0)[n % 4]")


def made(home: Path, target: float | None) -> str:
    """A 2-set campaign (base, a) of 4 runs a set, with ``target`` stored as
    ``campaign create --precision`` stores it (a command cannot be planned from parts)."""
    db = command_campaign(home, SCORE, "a", 4)
    if target is not None:
        with sqlite3.connect(db) as c:
            c.execute("UPDATE campaigns SET definition=json_set(definition, '$.precision', ?)",
                      (target,))  # fmt: skip
    return db


def status(home: Path, db: str) -> dict:
    return last_json(cli(home, "campaign", "status", "p", "--store", db, "--json"))


def test_a_known_set_stops_at_half_its_runs_and_the_rest_are_not_needed(tmp_path: Path) -> None:
    db = made(tmp_path, 0.05)
    counts = last_json(cli(tmp_path, "campaign", "run", "p", "--store", db, "--json"))
    # 'a' is looked at from 2 runs (half its 4) on: known there, its last 2 runs skipped
    assert counts["not_needed"] == 2 and counts["planned"] == 6 == counts["done"]
    assert counts["ok"] == 6 and counts["failed"] == counts["timeout"] == 0
    with sqlite3.connect(db) as c:
        runs = dict(c.execute("SELECT treatments, COUNT(*) FROM runs GROUP BY treatments"))
        (info,) = c.execute("SELECT json_extract(definition, '$.design_info') FROM campaigns")
    assert runs == {"": 4, "a": 2}  # the spread base runs every planned run
    (note,) = json.loads(info[0])["not_needed"]
    assert (note["set"], note["runs"], note["planned"], note["half_width"]) == ("a", 2, 4, 0.0)
    assert note["exact"] is True  # 'a' prints one value: said as exact, not as ±0.0%
    assert counts["stopped"][0]["reason"] == "known: exact (no spread in 2 runs)"
    assert len(note["seqs"]) == 2
    # status and a resumed run agree: nothing pending, nothing more run, no ETA left
    st = status(tmp_path, db)
    assert st["counts"]["not_needed"] == 2 and st["eta_s"] == 0.0
    assert st["precision"].get("pending", 0) == 0
    again = last_json(cli(tmp_path, "campaign", "run", "p", "--store", db, "--json"))
    assert again == counts
    text = cli(tmp_path, "campaign", "status", "p", "--store", db).output
    assert "2 planned runs not needed (their sets known)" in " ".join(text.split())


def test_a_campaign_cut_short_and_resumed_skips_what_is_known_at_once(tmp_path: Path) -> None:
    db = made(tmp_path, 0.05)
    first = last_json(cli(tmp_path, "campaign", "run", "p", "--store", db, "--max-runs", "4",
                          "--json"))  # fmt: skip
    # 2 blocks run, looked at after the second: 'a' known, only the base's 2 runs left
    assert first["done"] == 4 and first["not_needed"] == 2 and first["planned"] == 6
    st = status(tmp_path, db)
    assert st["counts"]["planned"] - st["counts"]["done"] == 2
    last = last_json(cli(tmp_path, "campaign", "run", "p", "--store", db, "--json"))
    assert last["not_needed"] == 2 and last["done"] == last["planned"] == 6
    with sqlite3.connect(db) as c:
        assert dict(c.execute("SELECT treatments, COUNT(*) FROM runs GROUP BY treatments")) == {
            "": 4,
            "a": 2,
        }


def test_without_a_target_every_planned_run_is_made(tmp_path: Path) -> None:
    db = made(tmp_path, None)
    counts = last_json(cli(tmp_path, "campaign", "run", "p", "--store", db, "--json"))
    assert counts["done"] == counts["planned"] == 8 and counts["not_needed"] == 0


@pytest.mark.parametrize(
    ("sets", "factors", "scale"),
    [([[], ["a"]], ["a"], 1.0), ([[], ["a"], ["b"], ["a", "b"]], ["a", "b"], 0.5)],
)
def test_a_sets_share_of_the_target_gives_each_effect_the_target(
    sets: list[list[str]], factors: list[str], scale: float
) -> None:
    """A set's mean within h gives an effect of the design sqrt(2 × scale) × h (a 2-set
    contrast: √2 h; a 2² factorial's main effect: h)."""
    d = CampaignDef(name="x", factors=factors, design="full", precision=0.05)
    h = stopping.set_target(d, sets)
    assert h is not None and h * math.sqrt(2 * scale) == pytest.approx(math.log1p(0.05))
    assert stopping.applies(d)
    assert not stopping.applies(CampaignDef(name="x", factors=factors, design="ordered",
                                            precision=0.05))  # fmt: skip
