"""Fill a run record from what the run left: the supervisor's counters and windows, the
measured process's result (or a command's score), and the run's status and error."""

from __future__ import annotations

import json
import os
import shutil
import socket
from pathlib import Path
from typing import Any

from perflab.hook import judge, program_logs, read_facts, task_count
from perflab.run import phases
from perflab.run.blackbox import ScoreError, parse_score
from perflab.run.record import RunRecord
from perflab.spec import RunSpec

STDERR_TAIL = 2000


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


def disk_full(run_dir: Path, error: str) -> str | None:
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


def fill(record: RunRecord, spec: RunSpec, sup: dict[str, Any], run_dir: Path) -> None:
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
        cause = disk_full(run_dir, record.error)
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
    """A black-box command's score; its window is the whole run (None: no valid score, or a
    treatment the hook could not prove)."""
    record.wall_s = record.measurement["command_wall_s"] = float(sup["wall_s"])
    count = _hook_facts(record, spec, run_dir)
    if record.status != "ok":
        return None
    try:
        score = parse_score((run_dir / "stdout.txt").read_text(errors="replace"), spec.metric)
    except ScoreError as exc:
        found = _score_without_line(record, spec.metric, count)
        if found is None:
            record.status = "failed"
            record.error = "\n".join(x for x in (str(exc), _tail(run_dir / "stderr.txt")) if x)
            record.measurement["bad_score"] = True
            return None
        score = found
    for key, value in score.items():
        setattr(record, key, int(value) if key in ("tasks",) else value)
    if count and count["completed"] and count["span_s"]:
        # the hook's own count of a Parsl program's tasks (first submit to last result)
        if record.tasks is None:
            record.tasks = int(count["completed"])
        if record.us_per_task is None and record.tasks_per_s is None:
            record.us_per_task = count["span_s"] * 1e6 / count["completed"]
    start = {"t": 0.0, "user": 0.0, "sys": 0.0, "ctx": 0.0, "write_bytes": 0.0}
    return start, {**sup["total"], "t": record.wall_s}


def _hook_facts(record: RunRecord, spec: RunSpec, run_dir: Path) -> dict[str, Any] | None:
    """What perflab's hook proved in the command's processes: per treated factor where it
    took effect (``measurement.treated``), the task count; a factor that took effect nowhere
    fails the run with the cause (it is never recorded as treated)."""
    facts = read_facts(run_dir)
    treated, causes = judge(spec.hook, spec.transforms, facts, run_dir)
    count = task_count(facts)
    if count:
        record.measurement["task_count"] = count
    logs = program_logs(facts)
    if logs:  # the program's own Parsl run_dir (runinfo/NNN), unless a rundir factor moved
        record.measurement["program_logs"] = logs  # it into perflab's (counted already)
        if not all(Path(d).is_relative_to(run_dir) for d in logs["run_dirs"]):
            record.log_bytes = (record.log_bytes or 0) + logs["bytes"]
    if treated:
        record.measurement["treated"] = treated
    if causes:
        record.status = "failed"
        record.error = "a treatment took effect nowhere:\n" + "\n".join(causes)
        record.measurement["not_treated"] = causes
    return count


def _score_without_line(
    record: RunRecord, metric: str, count: dict[str, Any] | None
) -> dict[str, float] | None:
    """A score for a command that printed none: its wall time (``--metric wall_s``), or the
    hook's µs per task of a Parsl program; None when neither is there."""
    if metric == "wall_s":
        record.measurement["score_from"] = "the command's wall time (no score line)"
        return {}
    if metric in ("us_per_task", "tasks_per_s") and count and count["completed"]:
        span = count["span_s"]
        if span and span > 0:
            record.measurement["score_from"] = "the hook's task count (no score line)"
            rate = count["completed"] / span
            return {"tasks": count["completed"], "us_per_task": 1e6 / rate, "tasks_per_s": rate}
    return None


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
    if final.get("splits"):  # the window's sub-batches (RunSpec.window_splits)
        record.measurement["window_splits"] = final["splits"]
    _fill_ideal(record, final)
    record.measurement["warmup_tasks"] = (result["warmup"] or {}).get("tasks", 0)
    record.env.update(result.get("env") or {})
    # "killed": the tree was ended once the result was written (no clean shutdown)
    record.measurement["teardown"] = result.get("teardown", "graceful")
    if "clock" in result:
        sup["child_clock"] = phases.child_stamps(result["clock"], result)
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
