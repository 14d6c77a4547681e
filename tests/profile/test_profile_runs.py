"""Profiles of real runs under strace: counts are complete over forks, threads and early exits;
the io profile tells tiny writes from aggregated ones; bad input is refused clearly."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from conftest import perflab
from perflab.profile.api import profile
from perflab.profile.strace import iter_file_calls, parse_file
from perflab.spec import RunSpec

pytestmark = pytest.mark.slow
HERE = Path(__file__).resolve().parent


@pytest.fixture(autouse=True)
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PERFLAB_HOME", str(tmp_path / "home"))


def test_fork_thread_early_exit_counted_fully(tmp_path: Path) -> None:
    mark = f"/nonexistent-perflab-{os.getpid()}"
    cmd = f"{sys.executable} {HERE / 'forky_script.py'} {mark}"
    res = profile(
        RunSpec(metric="us_per_task", command=cmd), ["syscalls"], tmp_path / "out", keep_trace=True
    )
    run = res["runs"][0]
    assert run["record"]["status"] == "ok"  # no score needed to profile a command
    trace = parse_file(str(tmp_path / "out" / "untreated.strace"))
    marked = [
        (pid, c.path)
        for pid, cls, c in iter_file_calls(trace)
        if cls == "stat" and (c.path or "").startswith(mark + "/")
    ]
    # 3 threads × 4 + main 2 + child 3 + grandchild (outlives everyone) 5
    assert len(marked) == 22
    by_tag: dict[str, set[int]] = {}
    for pid, path in marked:
        by_tag.setdefault(path.split("/")[2], set()).add(pid)
    assert by_tag["t0"] == by_tag["main"]  # threads count for their process
    assert len({*by_tag["main"], *by_tag["child"], *by_tag["grandchild"]}) == 3
    roles = {p["pid"]: p for p in run["syscalls"]["processes"]}
    python_main = next(iter(by_tag["main"]))
    assert roles[python_main]["threads"] == 4
    assert sum(p["counts"]["stat"] for p in run["syscalls"]["processes"]) >= 22
    assert res["projection"][0]["unit"] == "command start"


def test_io_histogram_separates_tiny_from_aggregated(tmp_path: Path) -> None:
    spec = RunSpec(
        target="cf-threads",
        workload="io",
        tasks=6,
        warmup=0,
        params={"kib": 4, "chunk": 64},
        engine_options={"workers": 2},
    )
    fixed = RunSpec(**{**spec.to_dict(), "params": {"kib": 4, "chunk": 64, "aggregate": 1}})
    res = profile(spec, ["timeline", "io"], tmp_path / "io", against=fixed)
    tiny, agg = (r["io"] for r in res["runs"])
    assert tiny["scope"] == agg["scope"] == "tasks"
    assert tiny["histogram"]["0-100"] == 6 * 64 and tiny["write_calls"] == 6 * 64
    assert agg["histogram"]["1K-10K"] == 6 and agg["write_calls"] == 6
    assert agg["histogram"]["0-100"] == 0
    assert tiny["bytes"] == agg["bytes"] == 6 * 4096
    assert tiny["findings"] and not agg["findings"]
    assert res["comparison"]["write_calls_cut"] == 64
    tl = res["runs"][0]["timeline"]
    assert tl["tasks"] == 6 and len(tl["events"]) == 6
    assert all(e["started"] <= e["ended"] <= e["received"] for e in tl["events"])
    html = Path(res["html"]).read_text()
    assert "Write sizes" in html and "data:image/png;base64," in html


def test_target_that_exits_at_once(tmp_path: Path) -> None:
    res = profile(
        RunSpec(metric="us_per_task", command="true"),
        ["io", "syscalls", "timeline"],
        tmp_path / "a",
    )
    run = res["runs"][0]
    assert run["record"]["status"] == "ok"
    assert run["io"]["write_calls"] == 0 and run["io"]["mib_per_s"] is None
    assert run["timeline"]["tasks"] == 0 and "note" in run["timeline"]
    assert run["trace"]["processes"] >= 1
    failed = profile(RunSpec(metric="us_per_task", command="exit 3"), ["syscalls"], tmp_path / "b")[
        "runs"
    ][0]
    assert failed["record"]["status"] == "failed"
    assert "exit code 3" in failed["record"]["error"]


def test_cli_strace_missing_is_one_clear_line(tmp_path: Path) -> None:
    env_path = os.environ["PATH"]
    os.environ["PATH"] = str(tmp_path)  # bash is found by absolute path below; strace is not
    try:
        proc = perflab(
            "profile", "--metric", "us_per_task", "--command", "true", "-o", str(tmp_path / "o")
        )
    finally:
        os.environ["PATH"] = env_path
    assert proc.returncode == 2
    assert proc.stderr.strip().count("\n") == 0
    assert "strace" in proc.stderr and "apt-get install strace" in proc.stderr
    assert not (tmp_path / "o").exists()
