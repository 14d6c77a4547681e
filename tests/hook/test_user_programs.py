"""A user's own program as the target: treatments reach it through perflab's hook, with
proof in the record, or the run fails with the cause (perflab/hook, factors/treat.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
import userprogram

from conftest import perflab_json
from perflab import PerflabError, measure

work = userprogram.work  # the fixture: the user's folder with the apps
_spec = userprogram.spec_for

# --- which names reach the program, which are labels ------------------------------------------


def test_a_catalog_config_factor_goes_to_the_hook_not_to_the_labels(work: Path) -> None:
    spec = _spec(work, "python parsl_app.py", "cfg_prefetch=100,cfg_noop_logging,algo=fast")
    assert spec.treatments == ["algo=fast", "cfg_noop_logging", "cfg_prefetch=100"]
    assert spec.hook["cfg_prefetch=100"] == [
        {"on": "HighThroughputExecutor", "arg": "prefetch_capacity", "value": 100}
    ]
    assert spec.hook["cfg_noop_logging"][0]["on"] == "Config"
    assert "algo=fast" not in spec.hook


def test_a_factor_twice_or_two_conflicting_factors_are_refused(work: Path) -> None:
    with pytest.raises(PerflabError, match="'cfg_prefetch' given twice"):
        _spec(work, "python parsl_app.py", "cfg_prefetch=10,cfg_prefetch=100")
    with pytest.raises(PerflabError, match="conflict"):
        _spec(work, "python parsl_app.py", "cfg_noop_logging,cfg_no_init_logging")


def test_a_source_factor_is_a_transform_of_the_command(work: Path) -> None:
    spec = _spec(work, "python parsl_app.py", "src_submit_biglogs_remove")
    assert [t["factor"] for t in spec.transforms] == ["src_submit_biglogs_remove"]
    assert spec.treatments == ["src_submit_biglogs_remove"]


def test_a_misspelt_catalog_name_is_refused_with_the_suggestion(work: Path) -> None:
    with pytest.raises(PerflabError, match="did you mean 'cfg_prefetch'.*label:cfg_prefetchh"):
        _spec(work, "python parsl_app.py", "cfg_prefetchh=100")
    spec = _spec(work, "python parsl_app.py", "label:cfg_prefetchh=100")
    assert spec.treatments == ["cfg_prefetchh=100"] and spec.hook == {}


def test_a_builtin_factor_that_cannot_reach_a_program_is_refused(work: Path) -> None:
    with pytest.raises(PerflabError, match="'affinity' cannot reach a command's program"):
        _spec(work, "python parsl_app.py", "affinity")
    with pytest.raises(PerflabError, match="cfg_unencrypted.*cannot reach"):
        _spec(work, "python parsl_app.py", "cfg_unencrypted")
    assert _spec(work, "python parsl_app.py", "label:affinity").treatments == ["affinity"]


# --- proof, or no record ----------------------------------------------------------------------


def test_a_program_without_parsl_fails_the_config_factor_with_the_cause(work: Path) -> None:
    rec = measure(_spec(work, "python plain_app.py", "cfg_prefetch=100"))
    assert rec.status == "failed"
    assert "cfg_prefetch=100: no Python process of the command imported Parsl" in rec.error
    assert "treated" not in rec.measurement
    assert rec.measurement["not_treated"] == [
        "cfg_prefetch=100: no Python process of the command imported Parsl"
    ]


def test_an_untreated_program_is_measured_as_before(work: Path) -> None:
    rec = measure(_spec(work, "python plain_app.py", metric="us_per_task"))
    assert rec.status == "ok", rec.error
    assert rec.us_per_task == sum(i * i for i in range(10_000)) % 97 + 1
    assert "treated" not in rec.measurement


# --- the program's own failures ---------------------------------------------------------------


def test_a_failing_program_is_a_failed_run_with_its_stderr(work: Path) -> None:
    rec = measure(_spec(work, "python fail_app.py"))
    assert rec.status == "failed"
    assert rec.error.startswith("exit code 3") and "the input file is missing" in rec.error


def test_a_hanging_program_is_a_timeout_with_its_stderr(work: Path) -> None:
    rec = measure(_spec(work, "python hang_app.py", timeout_s=2))
    assert rec.status == "timeout"
    assert "timed out after 2s" in rec.error and "now waiting forever" in rec.error


def test_no_score_line_fails_only_where_a_printed_metric_was_asked_for(work: Path) -> None:
    rec = measure(_spec(work, "python quiet_app.py", metric="us_per_task"))
    assert rec.status == "failed" and rec.measurement["bad_score"]
    assert "printed nothing on stdout" in rec.error and "no score" in rec.error
    rec = measure(_spec(work, "python quiet_app.py"))  # default: perflab measures it
    assert rec.status == "ok", rec.error
    assert rec.wall_s and rec.wall_s > 0 and rec.us_per_task is None
    assert (
        rec.measurement["score_from"]
        == "wall_s, measured by perflab (the command's output is not read)"
    )
    rec = measure(_spec(work, "python quiet_app.py", metric="wall_s"))  # named, none printed
    assert rec.status == "ok", rec.error
    assert (
        rec.measurement["score_from"]
        == "wall_s, measured by perflab (the command printed no score)"
    )


# --- a Parsl workflow written as a user would -------------------------------------------------


@pytest.mark.slow
def test_parsl_workflow_treated_with_proof_from_every_process(work: Path) -> None:
    spec = _spec(
        work,
        "python parsl_app.py 1000",
        "cfg_prefetch=100,cfg_noop_logging,src_submit_biglogs_remove",
        metric="wall_s",
        timeout_s=240,
    )
    rec = measure(spec)
    assert rec.status == "ok", rec.error
    treated = rec.measurement["treated"]
    assert sorted(treated) == ["cfg_noop_logging", "cfg_prefetch=100", "src_submit_biglogs_remove"]
    # the driver's executor: the program passed prefetch_capacity=0, the treatment overrode it
    driver = [e for e in treated["cfg_prefetch=100"] if e.get("option") == "prefetch_capacity"]
    assert driver == [{
        "process": driver[0]["process"], "object": "HighThroughputExecutor(label='htex_local')",
        "option": "prefetch_capacity", "old": 0, "new": 100, "overrode_program": True,
    }]  # fmt: skip
    # the pool itself started with it (its own command line, seen in its own process)
    pools = [e for e in treated["cfg_prefetch=100"] if e.get("object") == "worker pool"]
    assert pools and all(e["started_with"] == {"prefetch_capacity": 100} for e in pools)
    assert all(e["process"]["argv0"] == "process_worker_pool.py" for e in pools)
    logging = {e["process"]["argv0"]: e.get("started_with") for e in treated["cfg_noop_logging"]}
    assert logging["interchange.py"] == "NoopLogging"
    assert logging["process_worker_pool.py"] == "NoopLogging"
    assert not list((work / "runinfo").rglob("*.log")), "NoopLogging writes no log file"
    logs = rec.measurement["program_logs"]
    assert logs["run_dirs"] == [str(work / "runinfo" / "000")] and logs["files"] == 0
    # the transformed copy, imported by the driver, the interchange and the pools
    imports = treated["src_submit_biglogs_remove"]
    tree = Path(rec.measurement["transformed"][0]["tree"])
    assert {e["process"]["argv0"] for e in imports} >= {
        "parsl_app.py", "interchange.py", "process_worker_pool.py",
    }  # fmt: skip
    assert all(Path(e["imported"]).is_relative_to(tree) for e in imports)
    # the hook's own task count: 1,000 squares and the reduction tree's sums
    count = rec.measurement["task_count"]
    assert count["submitted"] == count["completed"] == 1000 + 125 + 16 + 2 + 1
    assert rec.tasks == 1144 and rec.us_per_task == pytest.approx(count["span_s"] * 1e6 / 1144)
    # its score line is its makespan (--metric wall_s named), under the command's wall time
    assert rec.measurement["score_from"].startswith("wall_s, read from the command's last")
    assert rec.wall_s is not None and 0 < rec.wall_s < rec.measurement["command_wall_s"]


@pytest.mark.slow
def test_an_htex_factor_on_a_thread_pool_program_fails_with_the_cause(work: Path) -> None:
    rec = measure(_spec(work, "python parsl_app.py 50 threads", "cfg_prefetch=100"))
    assert rec.status == "failed"
    assert rec.error.endswith(
        "cfg_prefetch=100: the command created no HighThroughputExecutor "
        "(its Config's executors: ThreadPoolExecutor)"
    ), rec.error
    # the logging factor reaches the Config of the same program: no parsl.log
    plain = measure(_spec(work, "python parsl_app.py 50 threads", metric="wall_s"))
    assert plain.status == "ok", plain.error
    assert plain.measurement["program_logs"]["lines"] > 100
    assert plain.log_bytes == plain.measurement["program_logs"]["bytes"]
    rec = measure(
        _spec(work, "python parsl_app.py 50 threads", "cfg_no_init_logging", metric="wall_s")
    )
    assert rec.status == "ok", rec.error
    assert rec.measurement["treated"]["cfg_no_init_logging"][0]["new"] is False
    assert rec.measurement["program_logs"]["lines"] == 0 and rec.log_bytes == 0


# --- what can reach my program? ---------------------------------------------------------------


def test_factors_list_for_a_command_without_a_task_system(work: Path) -> None:
    out = perflab_json("factors", "list", "--for-command", "python plain_app.py", cwd=work)
    assert out["probe"]["status"] == "ok" and out["probe"]["imports"] == {}
    assert "sched_batch" in out["factors"] and "startup_trim_path" in out["factors"]
    kinds = {k for f in out["factors"].values() for k in f["kinds"]}
    assert kinds <= {"env", "wrapper", "startup"}, kinds


@pytest.mark.slow
def test_factors_list_for_a_parsl_program_on_threads(work: Path) -> None:
    out = perflab_json(
        "factors", "list", "--for-command", "python parsl_app.py 20 threads", cwd=work
    )
    assert "parsl" in out["probe"]["imports"]
    assert out["probe"]["executors"] == ["ThreadPoolExecutor"]
    assert out["factors"]["cfg_noop_logging"]["reaches"] == "hook: Config"
    assert out["factors"]["src_submit_biglogs_remove"]["reaches"] == "treated copy of parsl"
    assert "cfg_prefetch" not in out["factors"]
