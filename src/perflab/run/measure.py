"""Measure one run in a fresh process tree, under a supervisor, and build its record."""

from __future__ import annotations

import json
import os
import shutil
import socket
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
from perflab.run import envinfo, launch
from perflab.run.blackbox import ScoreError, parse_score
from perflab.run.launch import Supervisor
from perflab.run.record import METRICS, RunRecord
from perflab.run.spec import RunSpec
from perflab.workloads import WORKLOADS

#: Seconds the caller waits for the supervisor beyond the run's own timeout.
SUPERVISOR_SLACK_S = 30.0
STDERR_TAIL = 2000


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
    if workload.needs_dependencies and engine.dependencies is None:
        able = [n for n, e in ENGINES.items() if e.dependencies]
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


def _log_bytes(run_dir: Path) -> int:
    total = 0
    for p in run_dir.rglob("*"):
        if p.is_file() and (p.suffix == ".log" or ".log." in p.name):
            try:
                total += p.stat().st_size
            except OSError:
                pass
    return total


def _tail(path: Path) -> str:
    try:
        data = path.read_bytes()[-STDERR_TAIL:]
    except OSError:
        return ""
    return data.decode(errors="replace").strip()


def measure(spec: RunSpec) -> RunRecord:
    """Run ``spec`` once in a fresh supervised process tree and return its record.

    Bad input raises PerflabError before anything starts; a run that fails or times out
    returns a record with ``status`` ``failed``/``timeout`` (never raises).
    A spec asking for package versions or another interpreter's venv runs in its private
    cached venv (built here on first use; a failed install is a PerflabError).
    """
    validate(spec)
    spec = prepare_environment(spec, home_dir("venvs"))
    # after the venv: a transform meets the source the run's interpreter imports
    sources = prepare_sources(spec, home_dir("transformed")) if (
        spec.transforms or spec.sources) else []  # fmt: skip
    launch.warm()
    run_id = uuid.uuid4().hex[:16]
    root = private_dir(spec.run_root) if spec.run_root else default_run_root()
    run_dir = (root / run_id).resolve()
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
    patched = None
    try:
        run_dir.mkdir(mode=0o700)
        if spec.patches:
            patched = patched_tree(spec.patches, home_dir("patched"))
        trees = [Path(s["tree"]) for s in sources] + ([patched] if patched else [])
        job = _job(spec, run_dir, trees)
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
    _fill(record, spec, sup, run_dir)
    record.measurement["patched_tree"] = str(patched) if patched else None
    if sources:
        record.measurement["transformed"] = sources
    if record.status == "ok" and not spec.keep_run_dir:
        shutil.rmtree(run_dir, ignore_errors=True)
        record.measurement["run_dir"] = None
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
        why = _disk_full(run_dir, "") or str(exc)
        return {"infrastructure": f"the supervisor left no result (exit {code}): {why}"}


def _disk_full(run_dir: Path, error: str) -> str | None:
    """Why a failed run was the machine's fault (a full filesystem), or None."""
    if "No space left on device" in error or "Errno 28" in error:
        return "No space left on device (the run directory's filesystem)"
    try:
        free = shutil.disk_usage(run_dir).free
    except OSError:
        return None
    if free < 64 * 1024:
        return f"No space left on device (the run directory's filesystem has {free} bytes free)"
    return None


def _infrastructure(record: RunRecord, cause: str, detail: str) -> None:
    """Mark a run that the machine spoiled: ``failed`` with the real cause, and flagged so a
    campaign keeps it as unmeasured (retried on resume) rather than done."""
    record.status = "failed"
    record.error = "\n".join(x for x in (cause, detail) if x)
    record.measurement["infrastructure"] = cause


def _fill(record: RunRecord, spec: RunSpec, sup: dict[str, Any], run_dir: Path) -> None:
    cores = os.cpu_count() or 1
    record.measurement = {
        "source": sup.get("source"),
        "run_dir": str(run_dir),
        "outlived": sup.get("outlived", []),
        "survivors": sup.get("survivors", []),
        "pids_seen": sup.get("seen", []),
        "processes": sup.get("processes", []),
        "returncode": sup.get("returncode"),
        # which process measured: the driver, or a Parsl worker of a scale-out campaign
        "measured_by": {"host": socket.gethostname(), "pid": os.getpid()},
    }
    record.log_bytes = _log_bytes(run_dir)
    record.peak_rss_bytes = sup.get("peak_rss_bytes")
    stderr_tail = _tail(run_dir / "stderr.txt")

    if sup.get("infrastructure"):
        _infrastructure(record, str(sup["infrastructure"]), stderr_tail)
        return
    if sup.get("timed_out") or sup.get("aborted"):
        record.status = "timeout" if sup.get("timed_out") else "failed"
        reason = (
            f"timed out after {spec.timeout_s:g}s" if sup.get("timed_out") else "aborted by signal"
        )
        record.error = "\n".join(x for x in (sup.get("error", reason), stderr_tail) if x)
        return
    if sup.get("returncode") != 0:
        record.status = "failed"
        record.error = f"exit code {sup.get('returncode')}\n{stderr_tail}".strip()
        cause = _disk_full(run_dir, record.error)
        if cause:
            _infrastructure(record, cause, record.error)
        return

    fill = _fill_command if spec.command is not None else _fill_engine
    try:
        window = fill(record, spec, sup, run_dir)
    except (OSError, ValueError, KeyError) as exc:  # e.g. the disk filled as it was written
        _infrastructure(record, f"the run left no usable result: {exc!r}", stderr_tail)
        return
    if window is None:
        return
    start, end = window
    window_s = end["t"] - start["t"]
    record.cpu_user_s = end["user"] - start["user"]
    record.cpu_sys_s = end["sys"] - start["sys"]
    record.ctx_switches = int(end["ctx"] - start["ctx"])
    record.write_bytes = int(end["write_bytes"] - start["write_bytes"])
    record.measurement["window_s"] = window_s
    if window_s > 0:
        record.utilization = (record.cpu_user_s + record.cpu_sys_s) / (window_s * cores)
    _complete_rates(record)


Counters = dict[str, float]


def _fill_command(
    record: RunRecord, spec: RunSpec, sup: dict[str, Any], run_dir: Path
) -> tuple[Counters, Counters] | None:
    """A black-box command's score; its window is the whole run (None: no valid score)."""
    record.wall_s = float(sup["wall_s"])
    try:
        score = parse_score((run_dir / "stdout.txt").read_text(errors="replace"), spec.metric)
    except ScoreError as exc:
        record.status = "failed"
        record.error = str(exc)
        record.measurement["bad_score"] = True
        return None
    for key, value in score.items():
        setattr(record, key, int(value) if key in ("tasks",) else value)
    start = {"t": 0.0, "user": 0.0, "sys": 0.0, "ctx": 0.0, "write_bytes": 0.0}
    return start, {**sup["total"], "t": record.wall_s}


def _fill_engine(
    record: RunRecord, spec: RunSpec, sup: dict[str, Any], run_dir: Path
) -> tuple[Counters, Counters]:
    """The final counted batch of an engine run, and the tree's counters around it."""
    result = json.loads((run_dir / "result.json").read_text())
    final = result["final"]
    win = sup["windows"][str(final["window"])]
    record.tasks = int(final["tasks"])
    record.wall_s = float(final["wall_s"])
    record.submit_s = float(final["submit_s"])
    record.first_result_s = float(final["first_result_s"])
    record.measurement["batches"] = [
        {k: b[k] for k in ("tasks", "wall_s")} for b in result["batches"]
    ]
    for key in ("submit_side_cpu_s", "submit_side_maxrss_bytes"):
        record.measurement[key] = final[key]
    _fill_ideal(record, final)
    record.measurement["warmup_tasks"] = (result["warmup"] or {}).get("tasks", 0)
    record.env.update(result.get("env") or {})
    if "workload_metrics" in final:  # a workload with its own loop says what it saw
        record.measurement["workload"] = final["workload_metrics"]
    return win["start"], win["end"]


def _fill_ideal(record: RunRecord, final: dict[str, Any]) -> None:
    """The workload's ideal time, efficiency = ideal ÷ wall, and its own facts (slots, DAG
    depth, kernel rate ...), under ``measurement`` (the run record's metrics stay as they
    are)."""
    ideal = final.get("ideal_s")
    if ideal is not None:
        record.measurement["ideal_s"] = float(ideal)
        wall = record.wall_s
        record.measurement["efficiency"] = float(ideal) / wall if wall else None
    if final.get("details"):
        record.measurement["workload"] = final["details"]


def _complete_rates(record: RunRecord) -> None:
    """Fill µs/task and tasks/s from each other or from tasks and wall time."""
    if record.us_per_task is None and record.tasks_per_s:
        record.us_per_task = 1e6 / record.tasks_per_s
    if record.us_per_task is None and record.tasks and record.wall_s:
        record.us_per_task = record.wall_s * 1e6 / record.tasks
    if record.tasks_per_s is None and record.us_per_task:
        record.tasks_per_s = 1e6 / record.us_per_task


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
