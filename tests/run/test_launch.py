"""Supervisors from the fork server: the same record as from a fresh interpreter, one server
reused across runs, a dead server replaced; /proc scanning and the sampling cadence."""

from __future__ import annotations

import os
import subprocess
import time

import psutil
import pytest

from perflab import RunSpec, measure
from perflab.run import launch
from perflab.run.procscan import FIRST_SAMPLE_S, RESCAN_S, Cadence, descendants

CMD = "python3 -c 'x = bytearray(40 << 20); print(7)'"


@pytest.mark.parametrize("mode", ["server", "exec"])
def test_both_launch_modes_measure_a_command_alike(
    mode: str, run_root: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(launch.MODE_ENV, mode)
    rec = measure(RunSpec(command=CMD, metric="us_per_task", run_root=run_root))
    assert rec.status == "ok", rec.error
    assert rec.us_per_task == 7
    # the 40 MiB buffer is seen, and the supervisor's own size is not taken for the run's
    assert 40 << 20 < (rec.peak_rss_bytes or 0) < 120 << 20
    assert rec.wall_s is not None and rec.wall_s < 5


def test_one_server_serves_many_runs_and_a_dead_one_is_replaced(
    run_root: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(launch.MODE_ENV, "server")
    assert (
        measure(RunSpec(metric="us_per_task", command="echo 1", run_root=run_root)).status == "ok"
    )
    server = launch._server
    assert server is not None and server.usable()
    assert (
        measure(RunSpec(metric="us_per_task", command="echo 2", run_root=run_root)).status == "ok"
    )
    assert launch._server is server  # reused, not restarted
    server.proc.kill()
    server.proc.wait()
    rec = measure(RunSpec(command="echo 3", metric="us_per_task", run_root=run_root))
    assert rec.status == "ok" and rec.us_per_task == 3
    assert launch._server is not server and launch._server is not None


def test_descendants_are_the_whole_tree_as_psutil_sees_it() -> None:
    proc = subprocess.Popen(["bash", "-c", "sleep 30 & (sleep 30 & wait) & wait"])
    try:
        time.sleep(0.5)
        mine = {pid for pid, _ in descendants(os.getpid())}
        theirs = {p.pid for p in psutil.Process().children(recursive=True)}
        assert proc.pid in mine and len(mine) >= 4
        assert mine == theirs
    finally:
        for p in psutil.Process(proc.pid).children(recursive=True):
            p.kill()
        proc.kill()
        proc.wait()


def test_cadence_starts_soon_then_settles_and_rescans_seldom() -> None:
    c = Cadence(interval=0.2, now=0.0)
    assert c.timeout(0.0) == pytest.approx(FIRST_SAMPLE_S)
    assert c.take(0.0) is None  # not due yet
    t, gaps, rescans = 0.0, [], []
    for _ in range(40):
        t += c.timeout(t)
        before = c.next
        rescans.append(c.take(t))
        gaps.append(c.next - before)
    assert gaps[:4] == pytest.approx([0.04, 0.08, 0.16, 0.2])
    assert all(g == pytest.approx(0.2) for g in gaps[4:])
    assert all(rescans[:4])  # while the tree forms, every sample looks for new processes
    settled = rescans[10:]
    assert 0 < sum(settled) <= len(settled) * 0.2 / RESCAN_S + 1


def test_a_run_measured_from_another_thread_gets_its_own_supervisor(run_root: str) -> None:
    from concurrent.futures import ThreadPoolExecutor

    before = launch._server
    with ThreadPoolExecutor(1) as pool:
        rec = pool.submit(
            measure, RunSpec(command="echo 4", metric="us_per_task", run_root=run_root)
        ).result()
    assert rec.status == "ok" and rec.us_per_task == 4
    assert launch._server is before  # no server tied to a thread that is gone
