"""Treatment factors: the catalog refuses bad sets, and each kind is really in force."""

from __future__ import annotations

import hashlib
import json
import os
import sys
from pathlib import Path

import pytest

from conftest import perflab
from perflab import PerflabError, RunSpec, measure
from perflab.engines.affinity import role_cores
from perflab.factors.catalog import CATEGORIES, load_catalogs
from perflab.factors.kinds.base import substitute
from perflab.factors.patching import package_dir
from perflab.factors.treat import treat

CUSTOM = """
[factor.mark]
description = "an env marker"
category = "environment"
env = { PERFLAB_MARK = "marked" }

[factor.nice5]
category = "environment"
wrapper = { nice = 5 }

[factor.needs_mark]
category = "safe_config"
targets = ["cf-threads"]
config = { workers = 1 }
requires = ["mark"]
"""


@pytest.fixture
def custom(tmp_path: Path) -> Path:
    p = tmp_path / "custom.toml"
    p.write_text(CUSTOM)
    return p


def test_builtin_catalog_is_valid() -> None:
    cat = load_catalogs()
    assert {
        "cfg_no_init_logging",
        "cfg_noop_logging",
        "src_submit_biglogs_remove",
        "affinity",
        "cfg_prefetch",
        "cfg_rundir_ramfs",
        "src_lazy_logs",
    } <= set(cat.names())
    for name in cat.names():
        assert cat.get(name).category in CATEGORIES
    # conflicts are symmetric once loaded
    assert "cfg_noop_logging" in cat.get("cfg_no_init_logging").conflicts


def test_level_substitution_keeps_type() -> None:
    assert substitute({"prefetch_capacity": "{level}"}, 100) == {"prefetch_capacity": 100}
    assert substitute(["a{level}b"], 3) == ["a3b"]


@pytest.mark.parametrize(
    ("treat_set", "fragment"),
    [
        ("nope", "unknown factor 'nope'"),
        ("cfg_noop_logging,cfg_no_init_logging", "conflict"),
        ("cfg_prefetch=7", "has no level '7'"),
        ("cfg_prefetch", "needs a level"),
        ("cfg_poll_100=3", "has no levels"),
        ("cfg_poll_100,cfg_poll_100", "given twice"),
        ("src_lazy_logs,src_pool_logs_remove", "conflict"),
    ],
)
def test_bad_treatment_sets_are_refused(treat_set: str, fragment: str) -> None:
    with pytest.raises(PerflabError, match=fragment):
        treat(RunSpec(target="parsl-htex"), treat_set, load_catalogs())


def test_requires_and_targets(custom: Path) -> None:
    cat = load_catalogs([str(custom)])
    with pytest.raises(PerflabError, match="requires 'mark'"):
        treat(RunSpec(target="cf-threads"), "needs_mark", cat)
    with pytest.raises(PerflabError, match="does not apply to target"):
        treat(RunSpec(target="cf-threads"), "cfg_poll_100", cat)
    spec = treat(RunSpec(target="cf-threads"), "needs_mark,mark", cat)
    assert spec.treatments == ["mark", "needs_mark"] and spec.env["PERFLAB_MARK"] == "marked"


def test_cli_refuses_before_running(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    proc = perflab("run", "--treat", "cfg_prefetch=7", "--tasks", "5", "--run-root", str(runs))
    assert proc.returncode == 2 and "has no level" in proc.stderr
    assert not runs.exists()  # nothing ran


@pytest.mark.parametrize(
    ("body", "line"),
    [('[factor.a]\nenv = { X = "1" }\nlevels = [1,\n', 3), ("[factor.a]\nenv = = 1\nx = 2\n", 2)],
)
def test_malformed_toml_names_file_and_line(tmp_path: Path, body: str, line: int) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text(body)
    proc = perflab("factors", "list", "--catalog", str(bad))
    assert proc.returncode == 2
    assert f"{bad}:{line}: malformed TOML" in proc.stderr


@pytest.mark.parametrize(
    ("body", "fragment"),
    [
        ('[factor.a]\ncategory = "weird"\nenv = {X="1"}\n', "category 'weird'"),
        ("[factor.a]\nfoo = 1\n", "unknown key 'foo'"),
        ('[factor.a]\ndescription = "x"\n', "has no effect"),
        ('[factor.a]\nenv = {X="1"}\nconflicts = ["b"]\n', "unknown factor 'b'"),
        ('[factor.a]\nwrapper = { policy = "fast" }\n', "policy must be"),
    ],
)
def test_bad_catalogs(tmp_path: Path, body: str, fragment: str) -> None:
    p = tmp_path / "c.toml"
    p.write_text(body)
    with pytest.raises(PerflabError, match=fragment):
        load_catalogs([str(p)])  # names are checked against every catalog merged


def _patch_catalog(tmp_path: Path, diff_text: str | None, version: str = "") -> Path:
    if diff_text is not None:
        (tmp_path / "p.diff").write_text(diff_text)
    v = f', version = "{version}"' if version else ""
    cat = tmp_path / "patch.toml"
    cat.write_text(
        f'[factor.p]\ntargets=["parsl-threads"]\n'
        f'patch = {{ package = "parsl", diff = "p.diff"{v} }}\n'
    )
    return cat


def test_patch_against_missing_file_is_refused(tmp_path: Path) -> None:
    diff = "--- a/parsl/nowhere.py\n+++ b/parsl/nowhere.py\n@@ -1 +1 @@\n-a\n+b\n"
    cat = load_catalogs([str(_patch_catalog(tmp_path, diff))])
    with pytest.raises(PerflabError, match="does not exist"):
        treat(RunSpec(target="parsl-threads"), "p", cat)
    elsewhere = tmp_path / "no_diff"
    elsewhere.mkdir()
    cat = load_catalogs([str(_patch_catalog(elsewhere, None))], builtin=False)
    with pytest.raises(PerflabError, match="patch file .* does not exist"):
        treat(RunSpec(target="parsl-threads"), "p", cat)


def test_patch_for_another_version_is_refused(tmp_path: Path) -> None:
    diff = "--- a/parsl/version.py\n+++ b/parsl/version.py\n@@ -1 +1 @@\n-a\n+b\n"
    cat = load_catalogs([str(_patch_catalog(tmp_path, diff, version="1999.1.1"))])
    with pytest.raises(PerflabError, match="made for parsl 1999.1.1"):
        treat(RunSpec(target="parsl-threads"), "p", cat)


def test_patch_that_does_not_apply_is_a_failed_run(tmp_path: Path) -> None:
    diff = (
        "--- a/parsl/version.py\n+++ b/parsl/version.py\n@@ -1,1 +1,1 @@\n"
        "-this line is not in the file\n+replacement\n"
    )
    cat = load_catalogs([str(_patch_catalog(tmp_path, diff))])
    spec = treat(RunSpec(target="parsl-threads", tasks=5, run_root=str(tmp_path / "r")), "p", cat)
    rec = measure(spec)
    assert rec.status == "failed"
    assert "does not apply" in (rec.error or "") and "p.diff" in (rec.error or "")


def test_role_cores_scale_the_seed_scheme() -> None:
    assert role_cores(8) == {
        "workers": [0, 1, 2, 3],
        "manager": [4],
        "interchange": [5],
        "submit": [6, 7],
    }
    assert role_cores(2) == {"workers": [0], "manager": [1], "interchange": [1], "submit": [1]}
    assert role_cores(1) == {"workers": [0], "manager": [0], "interchange": [0], "submit": [0]}


def _probes(rec) -> dict[str, dict]:
    run_dir = Path(rec.measurement["run_dir"])
    return {p.stem: json.loads(p.read_text()) for p in (run_dir / "probe").glob("*.json")}


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.mark.slow
def test_htex_treatments_are_in_force_in_every_process(custom: Path, run_root: str) -> None:
    site_dflow = package_dir("parsl") / "dataflow" / "dflow.py"
    before = _sha(site_dflow)
    spec = RunSpec(
        target="parsl-htex",
        workload="probe",
        tasks=40,
        warmup=0,
        run_root=run_root,
        keep_run_dir=True,
        engine_options={"workers": 2},
        timeout_s=120,
    )
    spec = treat(
        spec,
        "affinity,src_submit_biglogs_remove,src_pool_logs_remove,"
        "cfg_noop_logging,cfg_poll_100,mark,nice5,app_big",
        load_catalogs([str(custom)]),
    )
    rec = measure(spec)
    assert rec.status == "ok", rec.error
    probes = _probes(rec)
    submit = probes.pop("submit")
    assert probes, "no worker ran a probe task"
    cores = role_cores(os.cpu_count() or 1)
    [transformed] = rec.measurement["transformed"]  # both src_ factors: one copy of parsl
    tree = Path(transformed["tree"])
    assert {f["factor"]: f["total"] > 0 for f in transformed["factors"]} == {
        "src_submit_biglogs_remove": True,
        "src_pool_logs_remove": True,
    }
    assert "perflab: log call removed" in Path(transformed["diff"]).read_text()
    # wrapper: affinity per role, nice for the whole tree
    assert submit["affinity"] == cores["submit"]
    for w in probes.values():
        assert len(w["affinity"]) == 1
        assert set(w["affinity"]) <= set(cores["workers"])
        assert w["nice"] == 5
        # env
        assert w["env"]["PERFLAB_MARK"] == "marked"
        assert w["env"]["PERFLAB_TREATMENTS"] == ",".join(rec.treatments)
        # patch: the worker runs the patched pool script and imports the patched parsl
        assert w["main_file"] == str(tree / "bin" / "process_worker_pool.py")
        assert "perflab: log call removed" in Path(w["main_file"]).read_text()
        assert w["modules"]["parsl"].startswith(str(tree))
    assert submit["nice"] == 5
    assert (
        "perflab: log call removed" in Path(submit["modules"]["parsl.dataflow.dflow"]).read_text()
    )
    interchange = [p for p in rec.measurement["processes"] if "interchange" in p["cmdline"]]
    assert interchange and interchange[0]["affinity"] == cores["interchange"]
    # config: poll period reaches the worker pool's command line; NoopLogging: no log files
    managers = [p for p in rec.measurement["processes"] if "process_worker_pool" in p["cmdline"]]
    assert managers and "--poll 100" in managers[0]["cmdline"]
    assert rec.log_bytes == 0
    # workload
    assert rec.params["arg_bytes"] == 10000
    # the user's installation was not touched
    assert _sha(site_dflow) == before
    assert "perflab" not in site_dflow.read_text()


@pytest.mark.slow
def test_rundir_ramfs_and_no_init_logging(run_root: str) -> None:
    spec = RunSpec(
        target="parsl-threads",
        workload="probe",
        tasks=10,
        warmup=0,
        run_root=run_root,
        keep_run_dir=True,
    )
    untreated = measure(spec)
    treated = measure(treat(spec, "cfg_rundir_ramfs,cfg_no_init_logging", load_catalogs()))
    assert untreated.status == treated.status == "ok"
    assert treated.measurement["run_dir"].startswith("/dev/shm/")
    assert (Path(untreated.measurement["run_dir"]) / "runinfo" / "000" / "parsl.log").exists()
    assert not list(Path(treated.measurement["run_dir"]).rglob("parsl.log"))
    assert untreated.log_bytes > 0 and treated.log_bytes == 0
    assert _probes(treated)["submit"]["log_handlers"] == ["NullHandler:"]


@pytest.mark.slow
def test_interpreter_factor_runs_the_measurement_under_that_python(tmp_path: Path) -> None:
    wrapper = tmp_path / "py" / "python"
    wrapper.parent.mkdir()
    wrapper.write_text(f'#!/bin/sh\nPERFLAB_VIA_WRAPPER=yes exec {sys.executable} "$@"\n')
    wrapper.chmod(0o755)
    cat = tmp_path / "interp.toml"
    venv = wrapper.parent
    cat.write_text(f'[factor.other_python]\ncategory = "environment"\npython = "{venv}"\n')
    # a venv-style directory: <dir>/bin/python
    (tmp_path / "py" / "bin").mkdir()
    (tmp_path / "py" / "bin" / "python").symlink_to(wrapper)
    spec = RunSpec(
        target="cf-threads",
        workload="probe",
        tasks=5,
        warmup=0,
        keep_run_dir=True,
        run_root=str(tmp_path / "runs"),
    )
    rec = measure(treat(spec, "other_python", load_catalogs([str(cat)])))
    assert rec.status == "ok", rec.error
    assert rec.env["python_executable"] == str(tmp_path / "py" / "bin" / "python")
    assert _probes(rec)["submit"]["env"]["PERFLAB_VIA_WRAPPER"] == "yes"
