"""The postprocess workload on real engines; its bad input refused before anything runs."""

from __future__ import annotations

import pytest

from conftest import alive, perflab, perflab_json
from perflab import RunSpec, measure
from perflab.errors import PerflabError
from perflab.workloads import WORKLOADS


@pytest.mark.parametrize(
    "params, word",
    [
        ({"pp_s": -0.1}, "pp_s"),
        ({"concurrency": 0}, "concurrency"),
        ({"policy": "retrieve-all"}, "policy"),
        ({"task_s": "x"}, "task_s"),
    ],
)
def test_bad_parameters_are_refused(params: dict, word: str) -> None:
    with pytest.raises(PerflabError, match=word):
        WORKLOADS.get("postprocess")(params)


@pytest.mark.parametrize("param, word", [("pp_s=-1", "pp_s"), ("concurrency=0", "concurrency")])
def test_bad_parameter_on_the_command_line_is_one_line_exit_2(
    param: str, word: str, run_root: str
) -> None:
    proc = perflab(
        "run",
        "--target",
        "cf-threads",
        "--workload",
        "postprocess",
        "--tasks",
        "4",
        "--param",
        param,
        "--run-root",
        run_root,
    )
    assert proc.returncode == 2
    assert word in proc.stderr and "Traceback" not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1


def _run(target: str, policy: str, run_root: str) -> dict:
    rec = measure(
        RunSpec(
            target=target,
            workload="postprocess",
            tasks=6,
            warmup=2,
            params={"concurrency": 2, "task_s": 0.05, "pp_s": 0.01, "policy": policy},
            engine_options={"workers": 2},
            run_root=run_root,
        )
    )
    assert rec.status == "ok", rec.error
    assert rec.tasks == 6
    assert not alive(rec.measurement["pids_seen"])
    return rec.measurement["workload"]


@pytest.mark.slow
@pytest.mark.parametrize(
    "target, policy",
    [
        ("cf-threads", "drain-many"),
        ("cf-processes", "retrieve-one"),
        ("dask", "drain-many"),
        ("parsl-htex", "retrieve-one"),
    ],
)
def test_the_loop_runs_on_pool_engines(target: str, policy: str, run_root: str) -> None:
    w = _run(target, policy, run_root)
    # Physical bounds, not speed: no run beats the ideal, fractions are fractions.
    assert w["makespan_s"] >= w["ideal_makespan_s"]
    assert 0 < w["efficiency"] <= 1
    assert 0 <= w["worker_idle_fraction"] < 1
    assert 0 < w["manager_busy_fraction"] < 1
    assert 0 < w["time_to_first_result_s"] < w["makespan_s"]
    assert set(w["model_by_policy"]) == {"retrieve-one", "drain-many"}
    assert w["model_makespan_s"] >= w["ideal_makespan_s"]


@pytest.mark.slow
def test_policy_is_a_factor_from_a_catalog(tmp_path, run_root: str) -> None:
    cat = tmp_path / "pp.toml"
    cat.write_text(
        "[factor.drain_many]\n"
        'description = "post-process after dispatching every replacement"\n'
        'category = "safe_config"\n'
        'workload = { policy = "drain-many" }\n'
    )
    rec = perflab_json(
        "run",
        "--target",
        "cf-threads",
        "--workers",
        "2",
        "--workload",
        "postprocess",
        "--tasks",
        "4",
        "--warmup",
        "0",
        "--param",
        "task_s=0.02",
        "--param",
        "pp_s=0.01",
        "--catalog",
        str(cat),
        "--treat",
        "drain_many",
        "--run-root",
        run_root,
    )
    assert rec["status"] == "ok", rec["error"]
    assert rec["params"]["policy"] == "drain-many"
    assert rec["treatments"] == ["drain_many"]
    assert rec["measurement"]["workload"]["model_makespan_s"] > 0
