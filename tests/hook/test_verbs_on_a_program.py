"""``perflab tune`` over a user's own Parsl workflow through the real CLI: every record of a
treated set carries the proof of each of its factors, and the recommended set is measured
against the untreated program in the final blocks."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from conftest import perflab_json
from perflab.campaign.store import Store

APPS = Path(__file__).parent / "apps"


@pytest.mark.slow
def test_tune_over_a_parsl_workflow_records_the_proofs(tmp_path: Path) -> None:
    # the workflow on Parsl's thread pool: a run takes a second, not an HTEX's start and stop
    # (the proof of HTEX factors in every process: tests/hook/test_user_programs.py)
    shutil.copy(APPS / "parsl_app.py", tmp_path / "parsl_app.py")
    store = tmp_path / "s.db"
    out = perflab_json(
        "tune", "t", "--command", "python parsl_app.py 30 threads", "--metric", "wall_s",
        "--factors", "cfg_no_init_logging,startup_safe_path", "--search", "staged",
        "--budget", "26", "--pairs", "3", "--timeout", "240", "--store", str(store),
        cwd=tmp_path, timeout=3000, env={"PERFLAB_HOME": str(tmp_path / ".perflab")},
    )  # fmt: skip
    runs = [r for name in Store(store).campaign_names() for r in Store(store).records(name)]
    ok = [r for r in runs if r.status == "ok"]
    assert len(ok) == len(runs) == out["runs"], [r.error for r in runs if r.status != "ok"]
    for r in ok:
        assert sorted(r.measurement.get("treated", {})) == sorted(r.treatments), r.run_id
        logs = r.measurement["program_logs"]["lines"]
        assert (logs == 0) == ("cfg_no_init_logging" in r.treatments), (r.treatments, logs)
        # the hook's own count: 30 squares and the reduction tree's 4 + 1 sums
        assert r.measurement["task_count"]["completed"] == 35
    # the final blocks measured the recommended set against the untreated program
    final = [r for r in ok if ".final" in (r.campaign or "") or "-final" in (r.campaign or "")]
    assert any(r.treatments == [] for r in final)
    assert any(r.treatments == sorted(out["best_set"]) for r in final)
    measured = out["measured"]
    assert measured is None or measured["ci_low"] <= measured["ratio"] <= measured["ci_high"]
