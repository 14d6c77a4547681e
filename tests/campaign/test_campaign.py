"""Campaigns on a real store with real black-box commands: create, run, kill, resume."""

from __future__ import annotations

import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import PARSL_RUNNER_CONFIG, ROOT, perflab
from perflab import PerflabError, RunSpec
from perflab.campaign.dataset import export, import_csv, read_csv
from perflab.campaign.plan import create_campaign, interleave, run_campaign, status
from perflab.campaign.store import Store

SCORE = """#!/bin/bash
t=",$PERFLAB_TREATMENTS,"; s=1000
case $t in *,a,*) s=$((s-400));; esac
case $t in *,b,*) s=$((s-300));; esac
echo $s
"""


@pytest.fixture
def work(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "score.sh").write_text(SCORE)
    (tmp_path / "score.sh").chmod(0o755)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PERFLAB_HOME", str(tmp_path / ".perflab"))
    return tmp_path


def _runs(db: Path, name: str) -> list[tuple[int, str]]:
    con = sqlite3.connect(db)
    try:
        return con.execute("SELECT seq, status FROM runs WHERE campaign=?", (name,)).fetchall()
    finally:
        con.close()


def test_interleaved_replicates_never_run_back_to_back() -> None:
    import numpy as np

    sets = [["a"], ["b"], []]
    for seed in range(50):
        plan = interleave(sets, 4, np.random.default_rng(seed))
        assert len(plan) == 12
        assert all(plan[i][0] != plan[i + 1][0] for i in range(11))
        assert sorted(map(tuple, (s for s, _ in plan))) == sorted(map(tuple, sets * 4))


def test_campaign_runs_resumes_and_exports(work: Path) -> None:
    store = Store(work / "s.db")
    base = RunSpec(
        metric="us_per_task", command="./score.sh", cwd=str(work), run_root=str(work / "runs")
    )
    create_campaign(store, "c1", base, ["a", "b"], "full", replicates=2, seed=1)
    counts = run_campaign(store, "c1", max_runs=3)
    assert counts["done"] == 3 and counts["planned"] == 8
    counts = run_campaign(store, "c1")
    assert counts == {"planned": 8, "ok": 8, "failed": 0, "timeout": 0, "done": 8, "unmeasured": 0,
                      "not_needed": 0}  # fmt: skip
    assert run_campaign(store, "c1")["done"] == 8  # nothing left: nothing run again
    st = status(store, "c1")
    assert st["best"]["us_per_task"] == 300 and st["best"]["treatments"] == "a,b"
    out = export(store, "c1", work / "c1.csv")
    rows = out.read_text().splitlines()
    assert rows[0].startswith("run_id;timestamp;status;tasks;") and rows[0].endswith(
        ";treatments;a;b"
    )
    assert len(rows) == 9
    # round trip: the export imports as a campaign with the same runs
    assert import_csv(store, out, "c1_copy") == 8
    again = {(tuple(r.treatments), r.us_per_task) for r in store.records("c1_copy")}
    assert again == {(tuple(r.treatments), r.us_per_task) for r in store.records("c1")}


def test_sigkill_at_random_moments_loses_and_duplicates_nothing(work: Path) -> None:
    db = work / "s.db"
    proc = perflab(
        "campaign",
        "create",
        "k",
        "--metric",
        "us_per_task",
        "--command",
        "sleep 0.4; ./score.sh",  # slow enough that a dozen kills land mid-campaign
        "--factors",
        "a,b,c",
        "--design",
        "full",
        # 32 runs: each killed process completes a run or two (CI's 30 s for 48 runs), so a
        # dozen kills still land mid-campaign, and the resume after them has less to run
        "--runs",
        "4",
        "--store",
        str(db),
        cwd=work,
    )
    assert proc.returncode == 0, proc.stderr
    planned = 32
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "PERFLAB_HOME": str(work / ".perflab")}
    rng = random.Random(7)
    kills = 0
    while kills < 12 and len(_runs(db, "k")) < planned:
        p = subprocess.Popen(
            [sys.executable, "-m", "perflab", "campaign", "run", "k", "--store", str(db), "--json"],
            cwd=work,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        time.sleep(rng.uniform(0.3, 1.5))
        if p.poll() is None:
            p.send_signal(signal.SIGKILL)
            kills += 1
        p.wait()
    assert kills >= 10
    done = perflab("campaign", "run", "k", "--store", str(db), "--json", cwd=work)
    assert done.returncode == 0, done.stderr
    runs = _runs(db, "k")
    seqs = sorted(s for s, _ in runs)
    assert seqs == list(range(planned)), "each planned run stored exactly once"
    assert all(st == "ok" for _, st in runs)
    assert json.loads(done.stdout)["done"] == planned


def test_bad_input_leaves_the_store_unchanged(work: Path) -> None:
    db = work / "s.db"
    store = Store(db)
    base = RunSpec(metric="us_per_task", command="./score.sh", cwd=str(work))
    create_campaign(store, "c", base, ["a", "b"], "full", seed=1)
    before = (db.read_bytes(), store.campaign_names())
    with pytest.raises(PerflabError, match="unknown design 'nope'"):
        create_campaign(store, "x", base, ["a"], "nope")
    with pytest.raises(PerflabError, match="already exists"):
        create_campaign(store, "c", base, ["a"], "full")
    with pytest.raises(PerflabError, match="smaller than the design needs"):
        create_campaign(store, "x", base, ["a", "b"], "full", budget="3")
    bad = work / "bad.csv"
    bad.write_text(
        "run_id;timestamp;us_per_task;treatments\n1;1700000000;500;a\n2;1700000001;fast;b\n"
    )
    with pytest.raises(PerflabError, match=r"bad.csv:3: us_per_task 'fast' is not a number"):
        import_csv(store, bad, "imp")
    assert store.campaign_names() == before[1]
    assert len(store.records("c")) == 0


def test_cli_errors_exit_2(work: Path) -> None:
    args = ["--metric", "us_per_task", "--command", "./score.sh", "--store", str(work / "s.db")]
    assert (
        perflab(
            "campaign", "create", "c", *args, "--factors", "a", "--design", "zz", cwd=work
        ).returncode
        == 2
    )
    assert (
        perflab(
            "campaign",
            "create",
            "c",
            *args,
            "--factors",
            "a,b",
            "--design",
            "full",
            "--budget",
            "2",
            cwd=work,
        ).returncode
        == 2
    )
    proc = perflab("campaign", "status", "nope", "--store", str(work / "s.db"), cwd=work)
    assert proc.returncode == 2 and "no campaign 'nope'" in proc.stderr


def test_import_the_seeds_shape(work: Path) -> None:
    # the seed's CSV: treatments, Unix time, µs/task (comma list in a `;` file)
    seed = work / "seed.csv"
    seed.write_text(
        "treatments;time;us\ncfg_no_init_logging,affinity;1731600000;230.5\n;1731600100;1182\n"
    )
    recs = read_csv(seed, "s")
    assert [r.us_per_task for r in recs] == [230.5, 1182.0]
    assert recs[0].treatments == ["affinity", "cfg_no_init_logging"]
    assert recs[0].started_at.startswith("2024-11-14")
    # per-factor 0/1 columns with ISO timestamps
    cols = work / "cols.csv"
    cols.write_text(
        "timestamp;us_per_task;a;b\n2024-11-14T10:00:00;500;1;0\n2024-11-14T10:01:00;300;1;1\n"
    )
    assert [r.treatments for r in read_csv(cols, "c")] == [["a"], ["a", "b"]]
    nometric = work / "nometric.csv"
    nometric.write_text("timestamp;treatments\n1;a\n")
    with pytest.raises(PerflabError, match="nometric.csv:1: no metric column"):
        read_csv(nometric, "n")


@pytest.mark.slow
def test_parsl_runner_dispatches_runs_to_workers(work: Path) -> None:
    cfg = work / "runner.py"
    cfg.write_text(PARSL_RUNNER_CONFIG)
    (work / "slow.sh").write_text("#!/bin/bash\nsleep 0.5\n" + SCORE.split("\n", 1)[1])
    (work / "slow.sh").chmod(0o755)
    db = work / "s.db"
    assert (
        perflab(
            "campaign",
            "create",
            "p",
            "--metric",
            "us_per_task",
            "--command",
            "./slow.sh",
            "--factors",
            "a,b",
            "--design",
            "full",
            "--runs",
            "2",
            "--store",
            str(db),
            cwd=work,
        ).returncode
        == 0
    )
    proc = perflab(
        "campaign",
        "run",
        "p",
        "--runner",
        "parsl",
        "--runner-config",
        str(cfg),
        "--store",
        str(db),
        "--json",
        cwd=work,
        timeout=240,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert json.loads(proc.stdout.strip().splitlines()[-1])["ok"] == 8
    records = Store(db).records("p")
    by = {r.measurement["measured_by"]["pid"] for r in records}
    assert len(by) == 2  # both workers measured, each run exactly once
    assert sorted(r.us_per_task for r in records) == [300, 300, 600, 600, 700, 700, 1000, 1000]


def test_parquet_export_matches_csv(work: Path) -> None:
    import pandas as pd

    store = Store(work / "s.db")
    create_campaign(
        store,
        "q",
        RunSpec(metric="us_per_task", command="./score.sh", cwd=str(work)),
        ["a", "b"],
        "full",
        seed=2,
    )
    run_campaign(store, "q")
    csv = pd.read_csv(export(store, "q", work / "q.csv"), sep=";")
    pq = pd.read_parquet(export(store, "q", work / "q.parquet", "parquet"))
    assert list(pq.columns) == list(csv.columns)
    assert sorted(pq["us_per_task"]) == sorted(csv["us_per_task"]) == [300, 600, 700, 1000]


def test_local_runner_reports_each_run_and_stops_at_an_unmeasured_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from perflab.campaign.runners import local
    from perflab.run.record import RunRecord

    stored: list[tuple[str, int]] = []

    class FakeStore:
        def add_run(self, record: RunRecord, seq: int) -> None:
            stored.append(("run", seq))

        def add_unmeasured(self, record: RunRecord, seq: int, cause: str) -> None:
            stored.append(("unmeasured", seq))

    def fake_measure(spec: RunSpec) -> RunRecord:
        full = spec.params.get("full", False)
        measurement = {"infrastructure": "disk full"} if full else {}
        return RunRecord.of(spec, "id", "ok", "t0", "t1", measurement=measurement)

    monkeypatch.setattr(local, "measure", fake_measure)
    specs = [
        RunSpec(metric="us_per_task", command="true", params={"full": seq == 2}) for seq in range(4)
    ]
    told: list[tuple[int, int]] = []
    runner = local.LocalRunner()
    pending = list(enumerate(specs))
    runner.run(FakeStore(), pending, None, lambda rec, i, n: told.append((i, n)))  # type: ignore[arg-type]
    assert stored == [("run", 0), ("run", 1), ("unmeasured", 2)]
    assert told == [(1, 4), (2, 4), (3, 4)]
    stored.clear()
    runner.run(FakeStore(), pending, time.monotonic() - 1, None)  # type: ignore[arg-type]
    assert stored == []  # the budget was spent before the first run
