"""Dask factors (catalogs/dask.toml) reach a user's own Dask script through perflab's hook,
with proof from each process, and perflab's own ``dask`` target alike."""

from __future__ import annotations

from pathlib import Path

import pytest
import userprogram

from perflab import RunSpec, measure
from perflab.engines.dask_local import dask_settings
from perflab.factors.catalog import load_catalogs
from perflab.factors.treat import treat

work = userprogram.work  # the fixture: the user's folder with the apps
_spec = userprogram.spec_for


def test_the_dask_catalog_has_factors_for_config_and_cluster() -> None:
    catalog = load_catalogs()
    names = [n for n in catalog.names("dask") if n.startswith("dask_")]
    assert len(names) >= 8
    config, cluster = dask_settings({"tick_ms": 100, "log_level": "error", "processes": False})
    assert config == {"distributed.admin.tick.interval": "100ms"}
    assert cluster == {"silence_logs": 40, "processes": False}


def test_dask_factors_go_to_the_hook_for_a_command(work: Path) -> None:
    spec = _spec(work, "python dask_app.py", "dask_no_work_stealing,dask_threads")
    assert spec.hook == {
        "dask_no_work_stealing": [
            {"on": "dask.config", "key": "distributed.scheduler.work-stealing", "value": False}
        ],
        "dask_threads": [{"on": "LocalCluster", "arg": "processes", "value": False}],
    }


def test_a_dask_factor_on_a_program_without_dask_fails_with_the_cause(work: Path) -> None:
    rec = measure(_spec(work, "python plain_app.py", "dask_no_work_stealing"))
    assert rec.status == "failed"
    assert rec.measurement["not_treated"] == [
        "dask_no_work_stealing: no Python process of the command imported Dask distributed"
    ]


@pytest.mark.slow
def test_dask_program_treated_with_proof_from_the_driver_and_the_workers(work: Path) -> None:
    spec = _spec(
        work, "python dask_app.py 1000", "dask_no_work_stealing,dask_tick=100,dask_log_error",
        metric="wall_s", timeout_s=240,
    )  # fmt: skip
    rec = measure(spec)
    assert rec.status == "ok", rec.error
    treated = rec.measurement["treated"]
    stealing = treated["dask_no_work_stealing"]
    assert {(e["option"], e["old"], e["new"]) for e in stealing} == {
        ("distributed.scheduler.work-stealing", True, False)
    }
    # set in the user's script and again in each worker process the cluster spawned
    assert len({e["process"]["pid"] for e in stealing}) >= 3
    tick = treated["dask_tick=100"]
    assert all(e["new"] == "100ms" and e["old"] == "20ms" for e in tick)
    logs = treated["dask_log_error"]
    assert logs[0]["object"] == "LocalCluster(processes=True)"
    assert (logs[0]["option"], logs[0]["old"], logs[0]["new"]) == ("silence_logs", 30, 40)
    count = rec.measurement["task_count"]
    assert count["system"] == "dask"
    assert count["submitted"] == count["completed"] == 1000 + 125 + 16 + 2 + 1
    assert rec.tasks == 1144


@pytest.mark.slow
def test_a_dask_factor_reaches_perflabs_own_dask_target(work: Path) -> None:
    spec = RunSpec(target="dask", workload="noop", tasks=200, warmup=5,
                   run_root=str(work / "runs"))  # fmt: skip
    spec = treat(spec, "dask_no_work_stealing,dask_tick=100", load_catalogs())
    assert spec.engine_options == {"work_stealing": False, "tick_ms": 100}
    rec = measure(spec)
    assert rec.status == "ok", rec.error


@pytest.mark.slow
def test_the_tasks_of_dask_compute_are_counted_too(work: Path) -> None:
    rec = measure(RunSpec(command="python dask_compute_app.py 200", cwd=str(work),
                          run_root=str(work / "runs"), metric="wall_s", timeout_s=240))  # fmt: skip
    assert rec.status == "ok", rec.error
    count = rec.measurement["task_count"]
    # counted by the program's own scheduler: 200 squares and the reduction tree's sums
    assert count["submitted"] == count["completed"] == 200 + 25 + 4 + 1
    assert "Scheduler" in count["source"] and "dask.compute" in count["source"]
    assert rec.tasks == 230 and rec.us_per_task == pytest.approx(count["span_s"] * 1e6 / 230)
