"""``perflab campaign`` over a user's own Parsl workflow through the real CLI: every run
carries its factors' proofs, and the same runs are analysed by makespan and by the hook's own
task count. Apart from tests/hook/test_verbs_on_a_program.py (the tune over the same
workflow) so that ``--dist loadfile`` can run the two side by side."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from conftest import perflab_json
from perflab.campaign.store import Store

APPS = Path(__file__).parent / "apps"


@pytest.mark.slow
def test_a_campaign_over_a_parsl_workflow_analysed_by_the_hooks_count(tmp_path: Path) -> None:
    shutil.copy(APPS / "parsl_app.py", tmp_path / "parsl_app.py")
    store = str(tmp_path / "s.db")
    kw = {"cwd": tmp_path, "timeout": 1500, "env": {"PERFLAB_HOME": str(tmp_path / ".perflab")}}
    perflab_json(
        "campaign", "create", "c", "--command", "python parsl_app.py 20 threads",
        "--metric", "wall_s", "--factors", "cfg_no_init_logging,startup_safe_path",
        "--design", "full", "--runs", "2", "--store", store, **kw,
    )  # fmt: skip
    perflab_json("campaign", "run", "c", "--store", store, **kw)
    runs = Store(store).records("c")
    assert len(runs) == 8 and all(r.status == "ok" for r in runs), [r.error for r in runs]
    for r in runs:
        assert sorted(r.measurement.get("treated", {})) == r.treatments
        assert r.measurement["task_count"]["completed"] == 20 + 3 + 1
        logs = r.measurement["program_logs"]["lines"]
        assert (logs == 0) == ("cfg_no_init_logging" in r.treatments), (r.treatments, logs)
    # the same runs, scored by their makespan and by the hook's µs per task
    for metric in ("wall_s", "us_per_task"):
        out = perflab_json("analyze", "c", "--metric", metric, "--store", store, **kw)
        assert out["metric"] == metric and out["dataset"]["runs"] == 8, out["dataset"]
        assert out["summary"]["base_measured_us"] > 0
