"""Fill a run record from what the run left: the supervisor's counters and windows, the
measured process's result (or a command's score), and the run's status and error."""

from __future__ import annotations

import json
import os
import shutil
import socket
from pathlib import Path
from typing import Any

from perflab.engines.base import FAILURE_FILE
from perflab.hook import judge, judge_releases, program_logs, read_facts, task_count
from perflab.run import phases
from perflab.run.blackbox import ScoreError, measured_score, parse_score, printed_score
from perflab.run.record import RunRecord
from perflab.spec import SELF_MEASURED, RunSpec

STDERR_TAIL = 2000

#: A run record's fields while they are worked out here; the record is built once from them.
Draft = dict[str, Any]


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


def _own_cause(run_dir: Path) -> str:
    """What the measured process said of its own failure (``FAILURE_FILE``: an engine that
    saw its task system die), or ""."""
    try:
        return (run_dir / FAILURE_FILE).read_text(errors="replace")[:STDERR_TAIL].strip()
    except OSError:
        return ""


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


def _infrastructure(r: Draft, cause: str, detail: str) -> None:
    """Mark a run that the machine spoiled: ``failed`` with the real cause, and flagged so a
    campaign keeps it as unmeasured (retried on resume) rather than done."""
    r["status"] = "failed"
    r["error"] = "\n".join(x for x in (cause, detail) if x)
    r["measurement"]["infrastructure"] = cause


def fill(record: RunRecord, spec: RunSpec, sup: dict[str, Any], run_dir: Path) -> RunRecord:
    """``record`` (as the run started) completed from what the run left: the supervisor's
    counters and windows, the result or score, the status and error. A new record: the
    fields are worked out first, then the record is built from them."""
    r = record.to_dict()
    _fill(r, spec, sup, run_dir)
    return RunRecord.from_dict(r)


def _fill(r: Draft, spec: RunSpec, sup: dict[str, Any], run_dir: Path) -> None:
    cores = os.cpu_count() or 1
    r["measurement"] = {
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
    r["log_bytes"] = _log_bytes(run_dir)
    r["peak_rss_bytes"] = sup.get("peak_rss_bytes")
    stderr_tail = _tail(run_dir / "stderr.txt")

    if sup.get("infrastructure"):
        _infrastructure(r, str(sup["infrastructure"]), stderr_tail)
        return
    if sup.get("timed_out") or sup.get("aborted"):
        r["status"] = "timeout" if sup.get("timed_out") else "failed"
        reason = (
            f"timed out after {spec.timeout_s:g}s" if sup.get("timed_out") else "aborted by signal"
        )
        r["error"] = "\n".join(x for x in (sup.get("error", reason), stderr_tail) if x)
        return
    if sup.get("returncode") != 0:
        r["status"] = "failed"
        said = (_own_cause(run_dir), f"exit code {sup.get('returncode')}", stderr_tail)
        r["error"] = "\n".join(x for x in said if x)
        cause = disk_full(run_dir, r["error"])
        if cause:
            _infrastructure(r, cause, r["error"])
        return

    fill = _fill_command if spec.command is not None else _fill_engine
    try:
        window = fill(r, spec, sup, run_dir)
    except (OSError, ValueError, KeyError) as exc:  # e.g. the disk filled as it was written
        _infrastructure(r, f"the run left no usable result: {exc!r}", stderr_tail)
        return
    if window is None:
        return
    start, end = window
    window_s = end["t"] - start["t"]
    r["cpu_user_s"] = end["user"] - start["user"]
    r["cpu_sys_s"] = end["sys"] - start["sys"]
    r["ctx_switches"] = int(end["ctx"] - start["ctx"])
    r["write_bytes"] = int(end["write_bytes"] - start["write_bytes"])
    r["measurement"]["window_s"] = window_s
    if window_s > 0:
        r["utilization"] = (r["cpu_user_s"] + r["cpu_sys_s"]) / (window_s * cores)
    _complete_rates(r)


Counters = dict[str, float]


def _fill_command(
    r: Draft, spec: RunSpec, sup: dict[str, Any], run_dir: Path
) -> tuple[Counters, Counters] | None:
    """A black-box command's score; its window is the whole run (None: no valid score, or a
    treatment the hook could not prove)."""
    r["wall_s"] = r["measurement"]["command_wall_s"] = float(sup["wall_s"])
    count = _hook_facts(r, spec, run_dir)
    if r["status"] != "ok":
        return None
    try:
        score = _command_score(r, spec, run_dir)
    except ScoreError as exc:
        found = _score_without_line(r, spec.metric, count)
        if found is None:
            r["status"] = "failed"
            r["error"] = "\n".join(x for x in (str(exc), _tail(run_dir / "stderr.txt")) if x)
            r["measurement"]["bad_score"] = True
            return None
        score = found
    for key, value in score.items():
        r[key] = int(value) if key in ("tasks",) else value
    if count and count["completed"] and count["span_s"]:
        # the hook's own count of a Parsl program's tasks (first submit to last result)
        if r["tasks"] is None:
            r["tasks"] = int(count["completed"])
        if r["us_per_task"] is None and r["tasks_per_s"] is None:
            r["us_per_task"] = count["span_s"] * 1e6 / count["completed"]
    start = {"t": 0.0, "user": 0.0, "sys": 0.0, "ctx": 0.0, "write_bytes": 0.0}
    return start, {**sup["total"], "t": r["wall_s"]}


def _command_score(r: Draft, spec: RunSpec, run_dir: Path) -> dict[str, float]:
    """The metrics a command's stdout gives: none when no metric was named (perflab
    measures the command itself: ``spec.score_line`` is False; its stdout is not read), else
    its last line's, read as ``spec.metric`` in that metric's unit.
    ``measurement.score_from`` says which."""
    if not spec.score_line:
        r["measurement"]["score_from"] = measured_score(spec.metric)
        return {}
    score = parse_score((run_dir / "stdout.txt").read_text(errors="replace"), spec.metric)
    r["measurement"]["score_from"] = printed_score(spec.metric)
    return score


def _hook_facts(r: Draft, spec: RunSpec, run_dir: Path) -> dict[str, Any] | None:
    """What perflab's hook proved in the command's processes: per treated factor where it
    took effect (``measurement.treated``), the task count; a factor that took effect nowhere
    fails the run with the cause (it is never recorded as treated)."""
    facts = read_facts(run_dir)
    treated, causes = judge(spec.hook, spec.transforms, facts, run_dir, spec.python)
    releases, wrong = judge_releases(spec, facts)
    count = task_count(facts)
    if count:
        r["measurement"]["task_count"] = count
    logs = program_logs(facts)
    if logs:  # the program's own Parsl run_dir (runinfo/NNN), unless a rundir factor moved
        r["measurement"]["program_logs"] = logs  # it into perflab's (counted already)
        if not all(Path(d).is_relative_to(run_dir) for d in logs["run_dirs"]):
            r["log_bytes"] = (r["log_bytes"] or 0) + logs["bytes"]
    if treated:
        r["measurement"]["treated"] = treated
    if releases:  # the run's own release (a compare side's, explain's B) as each process saw it
        r["measurement"]["releases"] = releases
    errors = []
    if causes:
        errors.append("a treatment took effect nowhere:\n" + "\n".join(causes))
        r["measurement"]["not_treated"] = causes
    if wrong:
        errors.append("the command imported another release than the run's:\n" + "\n".join(wrong))
        r["measurement"]["wrong_release"] = wrong
    if errors:
        r["status"] = "failed"
        r["error"] = "\n".join(errors)
    return count


def _score_without_line(
    r: Draft, metric: str, count: dict[str, Any] | None
) -> dict[str, float] | None:
    """A score for a command that printed none: perflab's own measurement for a metric it
    measures (``--metric wall_s``: the command's wall time), the hook's µs per task of a
    Parsl program; None when neither is there."""
    if metric in SELF_MEASURED:
        r["measurement"]["score_from"] = measured_score(metric, "the command printed no score")
        return {}
    if metric in ("us_per_task", "tasks_per_s") and count and count["completed"]:
        span = count["span_s"]
        if span and span > 0:
            r["measurement"]["score_from"] = "the hook's task count (no score line)"
            rate = count["completed"] / span
            return {"tasks": count["completed"], "us_per_task": 1e6 / rate, "tasks_per_s": rate}
    return None


def _fill_engine(
    r: Draft, spec: RunSpec, sup: dict[str, Any], run_dir: Path
) -> tuple[Counters, Counters]:
    """The final counted batch of an engine run, and the tree's counters around it."""
    result = json.loads((run_dir / "result.json").read_text())
    final = result["final"]
    win = sup["windows"][str(final["window"])]
    r["tasks"] = int(final["tasks"])
    r["wall_s"] = float(final["wall_s"])
    r["submit_s"] = float(final["submit_s"])
    r["first_result_s"] = float(final["first_result_s"])
    r["measurement"]["batches"] = [
        {k: b[k] for k in ("tasks", "wall_s")} for b in result["batches"]
    ]
    for key in ("submit_side_cpu_s", "submit_side_maxrss_bytes"):
        r["measurement"][key] = final[key]
    if final.get("splits"):  # the window's sub-batches (RunSpec.window_splits)
        r["measurement"]["window_splits"] = final["splits"]
    _fill_ideal(r, final)
    r["measurement"]["warmup_tasks"] = (result["warmup"] or {}).get("tasks", 0)
    r["env"].update(result.get("env") or {})
    # "killed": the tree was ended once the result was written (no clean shutdown)
    r["measurement"]["teardown"] = result.get("teardown", "graceful")
    if "clock" in result:
        sup["child_clock"] = phases.child_stamps(result["clock"], result)
    if "workload_metrics" in final:  # a workload with its own loop says what it saw
        r["measurement"]["workload"] = final["workload_metrics"]
    return win["start"], win["end"]


def _fill_ideal(r: Draft, final: dict[str, Any]) -> None:
    """The workload's ideal time, efficiency = ideal ÷ wall, and its own facts (slots, DAG
    depth, kernel rate ...), under ``measurement`` (the run record's metrics stay as they
    are)."""
    ideal = final.get("ideal_s")
    if ideal is not None:
        r["measurement"]["ideal_s"] = float(ideal)
        wall = r["wall_s"]
        r["measurement"]["efficiency"] = float(ideal) / wall if wall else None
    if final.get("details"):
        r["measurement"]["workload"] = final["details"]


def _complete_rates(r: Draft) -> None:
    """Fill µs/task and tasks/s from each other or from tasks and wall time."""
    if r["us_per_task"] is None and r["tasks_per_s"]:
        r["us_per_task"] = 1e6 / r["tasks_per_s"]
    if r["us_per_task"] is None and r["tasks"] and r["wall_s"]:
        r["us_per_task"] = r["wall_s"] * 1e6 / r["tasks"]
    if r["tasks_per_s"] is None and r["us_per_task"]:
        r["tasks_per_s"] = 1e6 / r["us_per_task"]
