"""Measure one run in a fresh process tree, under a supervisor, and build its record."""

from __future__ import annotations

import json
import math
import os
import shutil
import statistics
import uuid
from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from perflab.engines import ENGINES
from perflab.engines.base import ExecutorEngine
from perflab.errors import PerflabError, insecure_refusal
from perflab.factors.sources import tree_package
from perflab.files import create_private, home_dir, perflab_home, private_dir
from perflab.hook import arm
from perflab.prepare import Prepared, prepare
from perflab.run import envinfo, isolate, launch, phases
from perflab.run.fill import disk_full, fill
from perflab.run.launch import Supervisor
from perflab.run.record import METRICS, Measurement, RunRecord
from perflab.spec import RunSpec
from perflab.workloads import WORKLOADS

#: Seconds the caller waits for the supervisor beyond the run's own timeout.
SUPERVISOR_SLACK_S = 30.0


def default_run_root() -> Path:
    return home_dir("runs")


def validate(spec: RunSpec) -> None:
    """Refuse a spec that cannot run, before anything is started (PerflabError)."""
    if (spec.tasks is None) == (spec.time_s is None) and spec.command is None:
        raise PerflabError("give exactly one of --tasks N and --time SECONDS")
    if spec.tasks is not None and spec.tasks < 1:
        raise PerflabError(f"--tasks must be at least 1 (got {spec.tasks})")
    # inf passed "> 0" and reached timers and sizing arithmetic; nan fails every comparison
    if spec.time_s is not None and not (math.isfinite(spec.time_s) and spec.time_s > 0):
        raise PerflabError(
            f"--time must be a positive finite number of seconds (got {spec.time_s})"
        )
    if spec.warmup < 0:
        raise PerflabError(f"--warmup must be >= 0 (got {spec.warmup})")
    if not (math.isfinite(spec.timeout_s) and spec.timeout_s > 0):
        raise PerflabError(
            f"--timeout must be a positive finite number of seconds (got {spec.timeout_s})"
        )
    # the run root exists, is ours and no one else can swap what goes in it (else exit 2)
    private_dir(spec.run_root or perflab_home() / "runs", create=False)
    for package, tree in spec.sources.items():
        tree_package(Path(tree), package)  # the tree holds the package (else exit 2)
    if spec.isolate is not None:
        isolate.check(spec.isolate)  # the rights, before anything runs
    if spec.command is not None:
        if not spec.command.strip():
            raise PerflabError("--command is empty")
        if spec.metric not in METRICS:
            raise PerflabError(f"unknown metric {spec.metric!r} (known: {', '.join(METRICS)})")
        return
    engine = ENGINES.get(spec.target)
    if spec.workload is None:
        raise PerflabError("an engine target needs --workload")
    workload = WORKLOADS.get(spec.workload)(spec.params)
    engine.validate(spec.engine_options, spec.parsl_config)
    why = engine.insecure(spec.engine_options, spec.parsl_config)
    if why and not spec.allow_insecure:
        raise insecure_refusal(why)
    if engine.runs_commands:
        workload.command()  # the command line exists and names an executable
    # a workload that resolves dependencies itself (a workflow) needs only an executor's loop
    own = workload.resolves_dependencies
    if (
        workload.needs_dependencies
        and engine.dependencies is None
        and not (own and issubclass(engine, ExecutorEngine))
    ):
        able = [
            n
            for n, e in ENGINES.items()
            if e.dependencies or (own and issubclass(e, ExecutorEngine))
        ]
        raise PerflabError(
            f"workload {spec.workload!r} needs task dependencies, which engine "
            f"{spec.target!r} cannot express (engines that can: {', '.join(able)})"
        )


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


def measure(spec: RunSpec | Prepared) -> RunRecord:
    """Run ``spec`` once in a fresh supervised process tree and return its record.

    Bad input raises PerflabError before anything starts; a run that fails or times out
    returns a record with ``status`` ``failed``/``timeout`` (never raises).
    What the spec needs on this machine (a private venv, transformed or patched copies) is
    made by ``prepare`` first (built on first use; a failed install is a PerflabError); a
    caller that runs one spec many times passes the ``Prepared`` spec, made once.
    """
    t_begin = phases.now()
    validate(spec.spec if isinstance(spec, Prepared) else spec)
    prepared = spec if isinstance(spec, Prepared) else prepare(spec)
    spec = prepared.spec
    launch.warm()
    run_id = uuid.uuid4().hex[:16]
    root = private_dir(spec.run_root) if spec.run_root else default_run_root()
    run_dir = (root / run_id).resolve()
    record = _new_record(prepared, run_id)
    ticks = envinfo.cpu_times()
    sup: dict[str, Any]
    try:
        run_dir.mkdir(mode=0o700)
        if prepared.unmade:  # a tree the machine could not write, as a full disk here
            raise OSError(prepared.unmade)
        if prepared.failed is None:
            job = _job(prepared, run_dir)
            if spec.command is not None:  # the hook: treatments reach the program, with proof
                arm(job["env"], prepared.spec, run_dir)
            create_private(run_dir / "job.json", json.dumps(job))  # the whole environment
    except OSError as exc:  # the machine's fault (disk full, no permission): not measured
        sup = {"infrastructure": f"could not prepare the run directory: {exc}"}
    else:
        if prepared.failed:  # a patch that does not apply: the run's own failure
            return _not_started(record, prepared.failed, run_dir)
        sup = _isolated(spec, run_id, job, run_dir)
    record = fill(replace(record, ended_at=_now()), spec, sup, run_dir)
    # the node's load alongside the run: a busy node's figures say so (compare.busy)
    record = replace(record, env={**record.env, "load": envinfo.load_now(ticks)})
    # what the caller side knows, after fill's keys (the record's key order is its contract)
    more: Measurement = {"patched_tree": str(prepared.patched) if prepared.patched else None}
    if "isolation" in sup:
        more["isolation"] = sup["isolation"]
    if prepared.transformed:
        more["transformed"] = list(prepared.transformed)
    if record.status == "ok" and not spec.keep_run_dir:
        shutil.rmtree(run_dir, ignore_errors=True)
        more["run_dir"] = None
    stamps = {"begin": t_begin, **sup.get("clock", {}), **sup.get("child_clock", {})}
    more["phases"] = phases.phases({**stamps, "end": phases.now()}, spec.command is not None)
    return replace(record, measurement={**record.measurement, **more})


def _not_started(record: RunRecord, error: str, run_dir: Path) -> RunRecord:
    """The record of a run that failed before its process tree started."""
    return replace(
        record,
        status="failed",
        error=error,
        ended_at=_now(),
        measurement={"run_dir": str(run_dir)},
    )


def _new_record(prepared: Prepared, run_id: str) -> RunRecord:
    """The run's record as it starts: identity, what runs, the environment."""
    spec = prepared.spec
    packages: tuple[str, ...] = () if spec.command else ENGINES.get(spec.target).packages
    env = envinfo.snapshot(packages, spec.python)
    if prepared.venv is not None:
        env["venv"] = dict(prepared.venv)
    return RunRecord.of(spec, run_id, "ok", _now(), "", env=env)


def _job(prepared: Prepared, run_dir: Path) -> dict[str, Any]:
    """What the supervisor runs: the command, or the measured child process for an engine."""
    spec = prepared.spec
    if spec.command is not None:
        argv = [*spec.wrapper, "bash", "-c", spec.command]
    else:
        create_private(run_dir / "spec.json", json.dumps(spec.to_dict()))
        child = ["-m", "perflab.run.child", str(run_dir / "spec.json")]
        argv = [*spec.wrapper, prepared.python, *child]
    return {
        "argv": argv,
        "env": prepared.run_env(run_dir),
        "run_dir": str(run_dir),
        # A command runs where the user is (relative paths work); an engine in its run dir.
        "cwd": (spec.cwd or os.getcwd()) if spec.command is not None else str(run_dir),
        "timeout_s": spec.timeout_s,
        "windows": spec.command is None,
        "sample_interval_s": spec.sample_interval_s,
    }


def _isolated(spec: RunSpec, run_id: str, job: dict[str, Any], run_dir: Path) -> dict[str, Any]:
    """``_supervise``, in the run's own cgroup with ``--isolate`` (made before, removed
    after — by the supervisor, and here again should it have died)."""
    if spec.isolate is None:
        return _supervise(spec, run_dir)
    iso = isolate.make(spec.isolate, run_id)
    try:
        job["isolate"] = iso.to_job()
        (run_dir / "job.json").unlink()
        create_private(run_dir / "job.json", json.dumps(job))
        return _supervise(spec, run_dir)
    finally:
        isolate.remove(iso)


def _supervise(spec: RunSpec, run_dir: Path) -> dict[str, Any]:
    """Run the supervisor over the run dir's job.json; what it measured, or why it could not.

    Only a supervisor that overran the run's own timeout is a timeout; one that left no result
    (a full disk, a deleted run directory, a crash) is an infrastructure failure with its cause.
    """
    limit = spec.timeout_s + SUPERVISOR_SLACK_S
    try:
        supervisor = Supervisor(run_dir / "job.json")
        code = supervisor.wait(limit)
    except OSError as exc:
        return {"infrastructure": f"the supervisor could not run: {exc}"}
    if code is None:
        supervisor.stop(grace_s=2.0)
        return {"returncode": None, "timed_out": True, "error": f"no result within {limit:g}s"}
    try:
        result: dict[str, Any] = json.loads((run_dir / "supervisor.json").read_text())
        return result
    except (OSError, ValueError) as exc:
        why = disk_full(run_dir, "") or str(exc)
        return {"infrastructure": f"the supervisor left no result (exit {code}): {why}"}


def summarize(records: list[RunRecord], metric: str = "us_per_task") -> dict[str, Any]:
    """Median and coefficient of variation (sample std / mean) of the ok runs' metric."""
    values = [getattr(r, metric) for r in records if r.status == "ok"]
    values = [float(v) for v in values if v is not None]
    out: dict[str, Any] = {"metric": metric, "n_ok": len(values), "n": len(records)}
    if values:
        out["median"] = statistics.median(values)
        out["mean"] = statistics.fmean(values)
    if len(values) >= 2:
        out["cv"] = statistics.stdev(values) / statistics.fmean(values)
    return out


def measure_repeated(
    spec: RunSpec, repeat: int, before: Callable[[int, int], None] | None = None
) -> list[RunRecord]:
    """``repeat`` fresh measurements of the same spec (each its own process tree);
    ``before(i, repeat)`` is called ahead of run i (1-based), e.g. to show progress."""
    if repeat < 1:
        raise PerflabError(f"--repeat must be at least 1 (got {repeat})")
    validate(spec)
    prepared = prepare(spec)  # once: every run of the same spec runs what it made
    records = []
    for i in range(1, repeat + 1):
        if before:
            before(i, repeat)
        records.append(measure(prepared))
    return records
