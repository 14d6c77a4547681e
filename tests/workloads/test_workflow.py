"""The ``wfcommons`` workload through real engines, and its bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import perflab

pytest.importorskip("wfcommons")


def _run(tmp_path: Path, target: str, *params: str) -> dict:
    args = [f"--param={p}" for p in params]
    r = perflab(
        "run", "--target", target, "--workload", "wfcommons", *args, "--tasks", "100000",
        "--warmup", "2", "--json", cwd=tmp_path, env={"PERFLAB_HOME": str(tmp_path / "home")},
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


@pytest.mark.slow
@pytest.mark.parametrize("target", ["cf-threads", "workqueue"])
def test_a_workflow_runs_with_its_files_and_its_ideal(tmp_path: Path, target: str) -> None:
    # the smallest Epigenomics (a process per task on Work Queue: each costs a start-up)
    rec = _run(tmp_path, target, "recipe=epigenomics", "size=43", "task_ms=2")
    assert rec["status"] == "ok", rec.get("error")
    m, w = rec["measurement"], rec["measurement"]["workload"]
    assert w["workflow_tasks"] == rec["tasks"] and 40 <= rec["tasks"] <= 43
    assert w["dependencies"] == ("callbacks" if target == "cf-threads" else "application")
    assert w["lower_bound_s"] <= m["ideal_s"] and 0 < m["efficiency"] <= 1.0
    assert w["overhead_s"] == pytest.approx(rec["wall_s"] - m["ideal_s"], abs=0.05)
    assert 0 <= w["queue_delay_p50_s"] <= w["queue_delay_max_s"]
    assert w["bytes_written"] > 0 and w["bytes_read"] >= w["bytes_staged"] > 0


@pytest.mark.parametrize(
    ("target", "params", "message"),
    [
        ("cf-threads", ["recipe=spiral"], "recipe 'spiral' is not one of"),
        ("cf-threads", ["recipe=blast", "size=5"], "Cannot create synthetic graph with 5"),
        ("shell", [], "job engines cannot run it"),
        ("redis-pubsub", [], "needs task dependencies, which engine 'redis-pubsub' cannot"),
    ],
)
def test_bad_workflow_input_exits_2_and_stores_nothing(
    tmp_path: Path, target: str, params: list[str], message: str
) -> None:
    home = tmp_path / "home"
    r = perflab(
        "run", "--target", target, "--workload", "wfcommons",
        *[f"--param={p}" for p in params], "--tasks", "100", cwd=tmp_path,
        env={"PERFLAB_HOME": str(home)},
    )  # fmt: skip
    assert r.returncode == 2, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0], r.stderr
    assert not list(tmp_path.rglob("*.db")) and not list((home / "runs").glob("*"))


@pytest.mark.parametrize(
    ("target", "params", "message"),
    [
        ("parsl-htex", ["recipe=spiral"], "recipe 'spiral' is not one of"),
        ("parsl-htex", ["recipe=blast", "size=5"], "Cannot create synthetic graph with 5"),
        ("redis-pubsub", [], "needs task dependencies, which engine 'redis-pubsub' cannot"),
    ],
)
def test_a_bad_workflow_campaign_is_refused_at_create(
    tmp_path: Path, target: str, params: list[str], message: str
) -> None:
    """The same checks when a campaign is planned: refused before any plan is stored."""
    r = perflab(
        "campaign", "create", "c", "--target", target, "--workload", "wfcommons",
        *[f"--param={p}" for p in params], "--factors", "cfg_noop_logging", cwd=tmp_path,
    )  # fmt: skip
    assert r.returncode == 2, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0], r.stderr
    assert not list(tmp_path.rglob("*.db"))
