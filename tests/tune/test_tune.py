"""The best-set search: on synthetic truths (pure), and on a black-box command via the CLI."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from conftest import PERFLAB, ROOT, TUNE_APP, perflab
from perflab.campaign.designs.base import Constraints
from perflab.campaign.store import Store
from perflab.tune.final import repair
from perflab.tune.stages import Tuner
from perflab.tune.truths import TRUTHS


def test_staged_search_finds_the_traps_optimum_and_its_interval_covers_the_truth() -> None:
    """Ten seeds at 300 runs: the recommendation within 5% of the optimum, with nothing in it
    that does nothing or harms, and a measured interval that covers the true speed-up, in at
    least eight (each is a random event; bench/best_set.py counts over 20 seeds). Six seeds
    with five needed left a 95% interval's two misses in six (3% by chance; 4 in 60 traps
    seeds, docs/tune.md) a failure: 8 of 10 fails a calibrated interval with p 0.012."""
    tr = TRUTHS["traps"]
    within = clean = covered = 0
    for seed in range(10):
        rng = np.random.default_rng(seed + 100)
        res = Tuner(tr.factors, tr.cons, 300, seed=seed).run(
            lambda sets, stage, reason, rng=rng: list(tr.measure(sets, rng))
        )
        t_best = tr.time(tr.matrix([res.best]))[0]
        within += t_best <= 1.05 * tr.optimum()
        clean += tr.unneeded(res.best) == []  # nothing that does nothing or harms
        truth = tr.time(tr.matrix([[]]))[0] / t_best
        covered += res.speedup.ci_low <= truth <= res.speedup.ci_high
        assert "s" not in res.best  # helps slow sets, hurts near the optimum
        assert set(res.best) <= set(res.searched)
        assert res.speedup.pairs >= 3 and res.runs <= 300
        names = [s.name for s in res.stages]
        assert names[:2] == ["screen", "focus"] and names[-1] == "final"
    assert within >= 8 and clean >= 8 and covered >= 8, (within, clean, covered)


def test_repair_always_returns_a_valid_set() -> None:
    factors = ["a", "b", "L=1", "L=2", "L=3"]
    cons = Constraints(factors, None)
    rng = np.random.default_rng(0)
    for _ in range(200):
        s = {f for f in factors if rng.random() < 0.7}
        out = repair(s, cons, rng, keep="L=2")
        assert cons.ok(out) and out <= s
        if "L=2" in s:
            assert "L=2" in out


def _runs_done(path: Path) -> int:
    """Finished runs in the store at ``path``, read afresh (a Store opened before the tune
    creates its file is an empty one in memory, and stays so)."""
    if not path.exists():
        return 0
    store = Store(path)
    try:
        return sum(store.counts(c)["done"] for c in store.campaign_names())
    finally:
        store.close()


@pytest.mark.slow
def test_tune_a_black_box_command_resumes_after_a_kill(tmp_path: Path) -> None:
    (tmp_path / "app.py").write_text(TUNE_APP)
    args = [
        "tune", "t1", "--command", f"{sys.executable} app.py", "--factors", "a,b,c,d,p=1,p=2",
        "--budget", "60", "--pairs", "4", "--store", str(tmp_path / "s.db"),
        "--metric", "us_per_task",
    ]  # fmt: skip
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "PERFLAB_HOME": str(tmp_path / ".pl")}
    proc = subprocess.Popen([*PERFLAB, *args], cwd=tmp_path, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and _runs_done(tmp_path / "s.db") < 8:
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    killed_at = _runs_done(tmp_path / "s.db")
    r = perflab(*args, "--json", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    result = json.loads(r.stdout)
    assert {"a", "b"} <= set(result["best_set"]) and "c" not in result["best_set"]
    m = result["measured"]
    # the level of p picked, if any (the truth of a set without p has no p factor at all)
    p_level = {"p=1": 0.95, "p=2": 0.9}
    truth = 1 / (0.6 * 0.8 * next((p_level[f] for f in result["best_set"] if f in p_level), 1))
    assert m["ci_low"] <= truth * 1.03 and truth / 1.03 <= m["ci_high"]
    store = Store(tmp_path / "s.db")
    counts = {c: store.counts(c) for c in store.campaign_names()}
    assert all(c["done"] == c["planned"] for c in counts.values())
    assert sum(c["done"] for c in counts.values()) == result["runs"] <= 60
    assert 8 <= killed_at < result["runs"]  # the kill came mid-way: the resume had work left
    assert result["dropped"] == sorted(
        f for e in result["evidence"] if not e["kept"] for f in e["factors"]
    )
    assert [lv["level"] for lv in result["levels"]][-1] == "source_remove"


def test_optuna_search_confirms_its_pick_with_measured_pairs() -> None:
    from perflab.tune.optuna_search import OptunaSearch

    tr = TRUTHS["traps"]
    rng = np.random.default_rng(7)
    res = OptunaSearch(tr.factors, tr.cons, 100, seed=0).run(
        lambda sets, stage, reason: list(tr.measure(sets, rng))
    )
    assert res.runs <= 100 and res.speedup.pairs >= 3
    names = [s.name for s in res.stages]
    # 100 runs for 20 candidates is short: no finalists, the runs go to the reduction
    assert names[-1] == "final" and "finalists" not in names and "reduce" in names
    assert all(lv["measured"] is None or set(lv["set"]) == set(res.best) for lv in res.levels)
    assert tr.cons.ok(set(res.best))
    truth = tr.time(tr.matrix([[]]))[0] / tr.time(tr.matrix([res.best]))[0]
    # one interval is a 95% event; coverage over seeds is measured in bench/best_set.py
    assert abs(res.speedup.ratio / truth - 1) < 0.05


def test_a_short_budget_is_noted_once_and_a_too_small_one_is_refused(tmp_path: Path) -> None:
    """Below ~15 runs per candidate the tune says up front that members may stay untested;
    a budget too small for the stages at all is bad input: one line, exit 2, the note not
    printed, nothing stored."""
    from perflab.tune.driver import short_budget

    assert short_budget(300, 20) == "" and "about 300 runs" in short_budget(299, 20)
    (tmp_path / "app.py").write_text(TUNE_APP)
    base = ["tune", "t3", "--command", f"{sys.executable} app.py", "--metric", "us_per_task",
            "--factors", "a,b,c"]  # fmt: skip
    store = ["--store", str(tmp_path / "s.db")]
    r = perflab(*base, "--budget", "20", *store, cwd=tmp_path)
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert "--budget 20" in r.stderr and "note:" not in r.stderr
    assert not (tmp_path / "s.db").exists() or not Store(tmp_path / "s.db").campaign_names()
    assert "give at least 28" in r.stderr  # the search's 6 runs, 16 to reduce, the finals
    r = perflab(*base, "--budget", "40", "--pairs", "3", *store, cwd=tmp_path, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    notes = [line for line in r.stderr.splitlines() if line.startswith("note:")]
    assert len(notes) == 1 and "--budget 40 for 3 candidates" in notes[0], r.stderr
    assert "recommended: a, b" in r.stdout and "search 1:" in r.stderr
