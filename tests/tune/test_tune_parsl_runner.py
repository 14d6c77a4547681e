"""``perflab tune --runner parsl``: every stage's runs go to the runner's workers. Apart from
tests/tune/test_tune.py so that ``--dist loadfile`` can run its four HTEX start-ups beside
that file's other slow tests."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from conftest import PARSL_RUNNER_CONFIG, TUNE_APP, perflab
from perflab.campaign.store import Store


@pytest.mark.slow
def test_tune_runs_through_the_parsl_runner(tmp_path: Path) -> None:
    """`--runner parsl`: every stage's runs go to the runner's workers (two blocks here)."""
    (tmp_path / "app.py").write_text(TUNE_APP)
    (tmp_path / "runner.py").write_text(PARSL_RUNNER_CONFIG)
    r = perflab(
        "tune", "t2", "--command", f"{sys.executable} app.py", "--factors", "a,b,c",
        "--metric", "us_per_task",
        "--budget", "36", "--pairs", "3", "--search", "staged", "--runner", "parsl",
        "--runner-config", "runner.py", "--store", str(tmp_path / "s.db"), "--json",
        cwd=tmp_path, timeout=400,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr[-2000:]
    result = json.loads(r.stdout)
    assert {"a", "b"} <= set(result["best_set"]) and "c" not in result["best_set"]
    store = Store(tmp_path / "s.db")
    stages = [store.records(c) for c in store.campaign_names()]
    assert sum(len(s) for s in stages) == result["runs"]
    # each stage starts the runner afresh: its runs are shared by that stage's two workers
    workers = [{rec.measurement["measured_by"]["pid"] for rec in s} for s in stages]
    assert all(len(w) <= 2 for w in workers) and max(len(w) for w in workers) == 2
