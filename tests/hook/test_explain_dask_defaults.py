"""``explain --command`` on a Dask program screens the defaults that changed between two
releases of ``distributed``: the keyword defaults of ``LocalCluster`` and ``Client``, and
the ``dask.config`` defaults (explain/dask_config.py), each restored by Dask's own
environment variable in every process of the program."""

from __future__ import annotations

import sys
import tomllib
from pathlib import Path
from types import SimpleNamespace

import pytest

from perflab.explain import dask_config, plan
from perflab.explain.dask_config import ConfigChange, changed_config, read_config
from perflab.explain.defaults import classes_for, introspect
from perflab.spec import RunSpec

CLASSES = ("distributed:LocalCluster", "distributed:Client")


def test_a_dask_program_compares_its_cluster_and_clients_defaults() -> None:
    assert set(CLASSES) <= set(classes_for("command", "python app.py", "distributed"))
    assert classes_for("command", "python app.py", "parsl") == classes_for("command", "x", "parsl")


@pytest.mark.slow  # imports this distributed twice (seconds on a busy machine), no engine
def test_a_releases_own_defaults_are_read_in_its_interpreter() -> None:
    params = introspect(sys.executable, list(CLASSES), "distributed here")
    # each keyword traced to the __init__ that declares it (the transform edits that one)
    assert params["distributed:LocalCluster"]["threads_per_worker"]["function"].endswith(
        "LocalCluster.__init__"
    )
    assert "direct_to_workers" in params["distributed:Client"]
    here = read_config(sys.executable, "distributed here")
    assert here["distributed.scheduler.work-stealing"] == "True"
    assert "distributed.worker.memory.target" in here


def test_the_dask_config_defaults_that_changed_are_factors() -> None:
    a = {"distributed.scheduler.work-stealing": "True", "distributed.comm.compression": "'auto'",
         "distributed.worker.memory.spill": "0.7", "distributed.dashboard.link": "'x'",
         "array.chunk-size": "'128MiB'", "distributed.only-in-a": "1"}  # fmt: skip
    b = {**a, "distributed.scheduler.work-stealing": "False", "distributed.comm.compression":
         "False", "distributed.dashboard.link": "'y'", "array.chunk-size": "'256MiB'"}  # fmt: skip
    del b["distributed.only-in-a"]
    got = {c.key: c for c in changed_config(a, b, ("distributed.",))}
    # the dashboard's link and keys outside distributed are not the program's speed
    assert set(got) == {"distributed.scheduler.work-stealing", "distributed.comm.compression"}
    steal = got["distributed.scheduler.work-stealing"]
    assert steal.factor == "dcfg_scheduler_work_stealing" and not steal.left_out
    assert steal.table()["env"] == {"DASK_DISTRIBUTED__SCHEDULER__WORK_STEALING": "True"}
    bad = changed_config({"distributed.x": "<object>"}, {"distributed.x": "1"}, ("distributed.",))
    assert "not a Python literal" in bad[0].left_out


def test_the_factors_variable_sets_as_value_in_dask() -> None:
    """What the factor's env sets is what Dask reads back (its own parser of DASK_ variables),
    over the release's default of the key (``-`` in the key, ``_`` in the variable)."""
    import dask.config

    change = ConfigChange("distributed.scheduler.worker-ttl", "'7 minutes'", "'5 minutes'")
    shipped = {"distributed": {"scheduler": {"worker-ttl": "5 minutes"}}}
    dask.config.update(shipped, dask.config.collect_env(change.table()["env"]))
    assert dask.config.get(change.key, config=shipped) == "7 minutes"


def test_explains_catalog_holds_the_changed_config_defaults(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PERFLAB_HOME", str(tmp_path / "home"))
    monkeypatch.setattr(plan, "prepare", lambda spec: SimpleNamespace(python=sys.executable))
    monkeypatch.setattr(plan.dflt, "introspect", lambda python, classes, label: {})
    shipped = {
        "1.0": {"distributed.scheduler.work-stealing": "True", "distributed.x": "1"},
        "2.0": {"distributed.scheduler.work-stealing": "False", "distributed.x": "1"},
    }
    monkeypatch.setattr(dask_config, "read_config", lambda py, label: shipped[label.split()[1]])
    setup = plan.Setup("d", "distributed", "1.0", "2.0", RunSpec(command="python app.py"), ["x"])
    prep = plan.make_plan(setup)
    assert prep.tables["dcfg_scheduler_work_stealing"]["env"] == {
        "DASK_DISTRIBUTED__SCHEDULER__WORK_STEALING": "True"
    }
    assert [d["factor"] for d in prep.defaults if d["cls"] == "dask.config"] == [
        "dcfg_scheduler_work_stealing"
    ]
    # and the catalog explain writes reads back as an env factor
    text = plan.to_toml({k: v for k, v in prep.tables.items() if k != "release_a"})
    assert tomllib.loads(text)["factor"]["dcfg_scheduler_work_stealing"]["env"] == {
        "DASK_DISTRIBUTED__SCHEDULER__WORK_STEALING": "True"
    }
