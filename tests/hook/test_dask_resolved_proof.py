"""A ``dask.config`` factor is proven by the value Dask itself resolved in each process that
imported it (``dask.config.get``), not by the ``DASK_*`` variable the process saw: explain's
``dcfg_*`` factors (an env factor) and the built-in Dask factors the hook sets alike
(perflab/hook/dask_proof.py, hook/dask_hook.py)."""

from __future__ import annotations

import re
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from perflab import RunSpec, measure
from perflab.factors.catalog import load_catalogs
from perflab.factors.treat import treat
from perflab.hook import dask_hook, judge
from perflab.hook.dask_proof import dask_key, interpret
from perflab.hook.seen import seen_ops

VAR = "DASK_DISTRIBUTED__SCHEDULER__WORK_STEALING_INTERVAL"
KEY = "distributed.scheduler.work_stealing_interval"


def _resolved(pid: int, value: object, untreated: object = "1s", at: str = "Worker") -> dict:
    return {"fact": "dask_config", "pid": pid, "argv0": "app.py", "at": at,
            "values": {KEY: value}, "untreated": {KEY: untreated}}  # fmt: skip


def _proc(pid: int) -> dict:
    return {"fact": "process", "pid": pid, "argv0": "app.py", "env": {VAR: "'500ms'"}}


def test_a_dask_variable_becomes_a_read_back_of_its_key() -> None:
    ops = seen_ops({"env": {VAR: "'500ms'", "OTHER": "1", "DASK_CONFIG": "/etc/dask"}})
    assert {"on": "dask_env", "var": VAR, "key": KEY, "value": "'500ms'"} in ops
    assert [op["var"] for op in ops if op["on"] == "dask_env"] == [VAR]  # not DASK_CONFIG
    assert dask_key("DASK_ARRAY__CHUNK_SIZE") == "array.chunk_size"
    assert (interpret("'500ms'"), interpret("True"), interpret("false"), interpret("500ms")) == (
        "500ms",
        True,
        False,
        "500ms",
    )


def test_the_env_variable_alone_does_not_prove_a_dask_factor() -> None:
    ops = {"dcfg_x": seen_ops({"env": {VAR: "'500ms'"}})}
    # every process saw the variable, but none resolved the key: no proof
    treated, causes = judge(ops, [], [_proc(7)])
    assert treated == {}
    assert causes == [f"dcfg_x: no Python process of the command resolved dask config {KEY!r} "
                      "(none imported dask)"]  # fmt: skip
    # one process where Dask resolved another value (the program's own set) fails the run
    facts = [_proc(7), _resolved(7, "500ms"), _proc(8), _resolved(8, "100ms")]
    treated, causes = judge(ops, [], facts)
    assert treated == {}
    assert causes == [f"dcfg_x: app.py (pid 8) resolved dask config {KEY!r} = '100ms', not '500ms'"]


def test_a_dask_factor_is_proven_old_to_new_by_the_resolved_value() -> None:
    ops = {"dcfg_x": seen_ops({"env": {VAR: "'500ms'"}})}
    treated, causes = judge(ops, [], [_proc(7), _resolved(7, "500ms"), _resolved(9, "500ms")])
    assert causes == []
    resolved = [e for e in treated["dcfg_x"] if e.get("object") == "dask.config"]
    assert resolved[0] == {
        "process": {"pid": 7, "argv0": "app.py"}, "object": "dask.config", "option": KEY,
        "old": "1s", "new": "500ms", "resolved_at": "Worker", "via": VAR,
    }  # fmt: skip
    assert [e["process"]["pid"] for e in resolved] == [7, 9]


def test_a_key_the_hook_set_that_the_program_set_back_fails_the_run() -> None:
    key = "distributed.scheduler.work-stealing"
    ops = {"dask_no_work_stealing": [{"on": "dask.config", "key": key, "value": False}]}
    set_ = {"fact": "set", "factor": "dask_no_work_stealing", "object": "dask.config",
            "option": key, "old": True, "new": False, "pid": 7, "argv0": "app.py"}  # fmt: skip
    back = {"fact": "dask_config", "pid": 7, "argv0": "app.py", "at": "LocalCluster",
            "values": {key: True}, "untreated": {key: True}}  # fmt: skip
    treated, causes = judge(ops, [], [set_, back])
    assert treated == {}
    assert causes == [
        f"dask_no_work_stealing: app.py (pid 7) resolved dask config {key!r} = True, not False"
    ]
    back["values"] = {key: False}
    treated, causes = judge(ops, [], [set_, back])
    assert causes == []
    assert treated["dask_no_work_stealing"][-1]["resolved_at"] == "LocalCluster"


def test_the_hook_reads_back_what_dask_resolved_and_what_it_would_without(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import dask.config

    facts: list[dict] = []
    ops = {"dcfg_x": seen_ops({"env": {VAR: "'500ms'"}})}
    hook = SimpleNamespace(
        ops=lambda on: [(f, op) for f, o in ops.items() for op in o if op["on"] == on],
        proof=SimpleNamespace(write=facts.append),
    )
    monkeypatch.setenv(VAR, "'500ms'")
    monkeypatch.setattr(dask_hook, "_resolved", {"pid": None, "at": set()})
    with dask.config.set({"distributed.scheduler.work-stealing-interval": "250ms"}):
        dask_hook.write_resolved(hook, "Worker")
        dask_hook.write_resolved(hook, "Worker")  # once per object kind
        dask_hook.write_resolved(hook, "exit")  # and at exit only if nothing was written
    assert len(facts) == 1
    assert facts[0]["fact"] == "dask_config" and facts[0]["at"] == "Worker"
    assert facts[0]["values"] == {KEY: "250ms"}  # the program's own set wins
    # without the variable: distributed's default once it is imported (1s), else nothing
    assert facts[0]["untreated"][KEY] != "500ms"


@pytest.mark.slow  # two runs of a program that imports dask.config (no cluster)
def test_a_dcfg_factor_on_a_program_is_proven_or_fails_with_what_dask_resolved(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PERFLAB_HOME", str(tmp_path / "home"))
    cat = tmp_path / "cat.toml"
    cat.write_text(f'[factor.dcfg_x]\ncategory = "safe_config"\nenv = {{ {VAR} = "\'500ms\'" }}\n')
    (tmp_path / "runs").mkdir(mode=0o700)
    (tmp_path / "ok.py").write_text("import dask.config\nprint(1.0)\n")
    (tmp_path / "own.py").write_text(
        "import dask.config\n"
        "dask.config.set({'distributed.scheduler.work-stealing-interval': '100ms'})\n"
        "print(1.0)\n"
    )

    def run(app: str):
        spec = RunSpec(command=f"{sys.executable} {app}", cwd=str(tmp_path),
                       run_root=str(tmp_path / "runs"), metric="wall_s", timeout_s=120)  # fmt: skip
        return measure(treat(spec, "dcfg_x", load_catalogs([str(cat)])))

    rec = run("ok.py")
    assert rec.status == "ok", rec.error
    proof = [e for e in rec.measurement["treated"]["dcfg_x"] if e.get("object") == "dask.config"]
    assert proof and all(e["new"] == "500ms" and e["resolved_at"] == "exit" for e in proof)
    rec = run("own.py")
    assert rec.status == "failed"
    [cause] = rec.measurement["not_treated"]
    assert re.fullmatch(
        rf"dcfg_x: own\.py \(pid \d+\) resolved dask config '{KEY}' = '100ms', not '500ms'", cause
    )
