"""Measure one run in a fresh process tree, under a supervisor, and build its record."""

from __future__ import annotations

import json
import os
import shutil
import statistics
import sys
import uuid
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import perflab
from perflab.engines import ENGINES
from perflab.errors import PerflabError, insecure_refusal
from perflab.factors.patching import PatchError, patched_tree
from perflab.factors.transformed import prepare_sources, tree_package
from perflab.factors.venvs import prepare_environment
from perflab.files import create_private, home_dir, perflab_home, private_dir
from perflab.hook import arm
from perflab.run import envinfo, launch, phases
from perflab.run.fill import disk_full, fill
from perflab.run.launch import Supervisor
from perflab.run.record import METRICS, RunRecord
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
    if spec.time_s is not None and not spec.time_s > 0:
        raise PerflabError(f"--time must be positive (got {spec.time_s})")
    if spec.warmup < 0:
        raise PerflabError(f"--warmup must be >= 0 (got {spec.warmup})")
    if not spec.timeout_s > 0:
        raise PerflabError(f"--timeout must be positive (got {spec.timeout_s})")
    # the run root exists, is ours and no one else can swap what goes in it (else exit 2)
    private_dir(spec.run_root or perflab_home() / "runs", create=False)
    for package, tree in spec.sources.items():
        tree_package(Path(tree), package)  # the tree holds the package (else exit 2)
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
    own = getattr(workload, "resolves_dependencies", False)
    if (
        workload.needs_dependencies
        and engine.dependencies is None
        and not (own and hasattr(engine, "loop"))
    ):
        able = [n for n, e in ENGINES.items() if e.dependencies or (own and hasattr(e, "loop"))]
        raise PerflabError(
            f"workload {spec.workload!r} needs task dependencies, which engine "
            f"{spec.target!r} cannot express (engines that can: {', '.join(able)})"
        )


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


def _prepend(env: dict[str, str], var: str, *dirs: str) -> None:
    env[var] = os.pathsep.join(dict.fromkeys(p for p in (*dirs, env.get(var)) if p))


def _child_env(spec: RunSpec, run_dir: Path, trees: list[Path]) -> dict[str, str]:
    env = dict(os.environ)
    # The measured interpreter (possibly another Python) must import this perflab, and the
    # patched or transformed copies of packages (if any) must shadow the installed ones.
    src = str(Path(perflab.__file__).resolve().parent.parent)
    _prepend(env, "PYTHONPATH", *map(str, trees), src)
    # Task systems find their helper scripts (Parsl's interchange.py, process_worker_pool.py)
    # on PATH: the measured interpreter's bin directory first, as an activated venv would.
    bins = [str(Path(spec.python or sys.executable).parent), str(Path(sys.executable).parent)]
    _prepend(env, "PATH", *(str(t / "bin") for t in trees), *bins)
    env["PERFLAB_TREATMENTS"] = ",".join(spec.treatments)
    env["PERFLAB_RUN_DIR"] = str(run_dir)
    env.update({k: v for k, v in spec.env.items() if k != "PYTHONPATH"})
    # A treatment's PYTHONPATH goes first (a start-up bundle); perflab must stay importable.
    if spec.env.get("PYTHONPATH"):
        _prepend(env, "PYTHONPATH", spec.env["PYTHONPATH"])
    return env


def measure(spec: RunSpec) -> RunRecord:
    """Run ``spec`` once in a fresh supervised process tree and return its record.

    Bad input raises PerflabError before anything starts; a run that fails or times out
    returns a record with ``status`` ``failed``/``timeout`` (never raises).
    A spec asking for package versions or another interpreter's venv runs in its private
    cached venv (built here on first use; a failed install is a PerflabError).
    """
    t_begin = phases.now()
    validate(spec)
    spec = prepare_environment(spec, home_dir("venvs"))
    # after the venv: a transform meets the source the run's interpreter imports
    sources = prepare_sources(spec, home_dir("transformed")) if (
        spec.transforms or spec.sources) else []  # fmt: skip
    launch.warm()
    run_id = uuid.uuid4().hex[:16]
    root = private_dir(spec.run_root) if spec.run_root else default_run_root()
    run_dir = (root / run_id).resolve()
    record = _new_record(spec, run_id)
    patched = None
    try:
        run_dir.mkdir(mode=0o700)
        if spec.patches:
            patched = patched_tree(spec.patches, home_dir("patched"))
        trees = [Path(s["tree"]) for s in sources] + ([patched] if patched else [])
        job = _job(spec, run_dir, trees)
        if spec.command is not None:  # the hook: treatments reach the program, with proof
            arm(job["env"], spec, run_dir)
        create_private(run_dir / "job.json", json.dumps(job))  # the whole environment
    except PatchError as exc:
        record.status, record.error = "failed", str(exc)
        record.ended_at = _now()
        record.measurement = {"run_dir": str(run_dir)}
        return record
    except OSError as exc:  # the machine's fault (disk full, no permission): not measured
        sup: dict[str, Any] = {"infrastructure": f"could not prepare the run directory: {exc}"}
    else:
        sup = _supervise(spec, run_dir)
    record.ended_at = _now()
    fill(record, spec, sup, run_dir)
    record.measurement["patched_tree"] = str(patched) if patched else None
    if sources:
        record.measurement["transformed"] = sources
    if record.status == "ok" and not spec.keep_run_dir:
        shutil.rmtree(run_dir, ignore_errors=True)
        record.measurement["run_dir"] = None
    stamps = {"begin": t_begin, **sup.get("clock", {}), **sup.get("child_clock", {})}
    record.measurement["phases"] = phases.phases(
        {**stamps, "end": phases.now()}, spec.command is not None
    )
    return record


def _new_record(spec: RunSpec, run_id: str) -> RunRecord:
    """The run's record as it starts: identity, what runs, the environment."""
    packages: tuple[str, ...] = () if spec.command else ENGINES.get(spec.target).packages
    record = RunRecord(
        run_id=run_id,
        campaign=spec.campaign,
        started_at=_now(),
        ended_at="",
        target=spec.target,
        workload=spec.workload,
        params=dict(spec.params),
        treatments=sorted(spec.treatments),
        status="ok",
        env=envinfo.snapshot(packages, spec.python),
    )
    if spec.packages or spec.venv_base:
        record.env["venv"] = {"python": spec.python, "requirements": list(spec.packages)}
    return record


def _job(spec: RunSpec, run_dir: Path, trees: list[Path]) -> dict[str, Any]:
    """What the supervisor runs: the command, or the measured child process for an engine."""
    if spec.command is not None:
        argv = [*spec.wrapper, "bash", "-c", spec.command]
    else:
        create_private(run_dir / "spec.json", json.dumps(spec.to_dict()))
        python = spec.python or sys.executable
        argv = [*spec.wrapper, python, "-m", "perflab.run.child", str(run_dir / "spec.json")]
    return {
        "argv": argv,
        "env": _child_env(spec, run_dir, trees),
        "run_dir": str(run_dir),
        # A command runs where the user is (relative paths work); an engine in its run dir.
        "cwd": (spec.cwd or os.getcwd()) if spec.command is not None else str(run_dir),
        "timeout_s": spec.timeout_s,
        "windows": spec.command is None,
        "sample_interval_s": spec.sample_interval_s,
    }


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
    records = []
    for i in range(1, repeat + 1):
        if before:
            before(i, repeat)
        records.append(measure(spec))
    return records
