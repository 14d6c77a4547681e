"""The seed-001 engines against real servers: shell, saga (fork:// and ssh:// to an sshd that
perflab starts), redis-pubsub (a redis-server perflab starts). Each test checks that no
process of the run is left, including sshd, redis-server, saga's shells and the jobs."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from conftest import ROOT, alive
from perflab.errors import PerflabError
from perflab.factors.catalog import load_catalogs
from perflab.factors.treat import treat
from perflab.run.measure import measure
from perflab.spec import RunSpec

pytestmark = pytest.mark.slow


def _run(run_root: str, target: str, tasks: int, warmup: int = 1, **opts: object) -> object:
    spec = RunSpec(
        target=target,
        workload="noop",
        tasks=tasks,
        warmup=warmup,
        engine_options={k: str(v) for k, v in opts.items()},
        timeout_s=120,
        run_root=run_root,
    )
    return measure(spec)


def _mine(marker: str) -> list[psutil.Process]:
    """Live processes of a test's runs: ``marker`` (the test's tmp path) in the command line,
    working directory or environment (redis-server rewrites its command line; sshd sessions
    carry PERFLAB_SSHD_DIR; everything else inherits PERFLAB_RUN_DIR)."""
    out = []
    for p in psutil.process_iter(["cmdline", "status", "cwd", "environ"]):
        try:
            if p.info["status"] == psutil.STATUS_ZOMBIE or p.pid == os.getpid():
                continue
            text = " ".join(p.info["cmdline"] or [])
            text += f" {p.info['cwd'] or ''} {' '.join((p.info['environ'] or {}).values())}"
            if marker in text:
                out.append(p)
        except psutil.Error:
            continue
    return out


def _clean(rec: object, run_root: str) -> None:
    # the engine stopped its servers itself (the supervisor found nothing to kill) ...
    assert rec.measurement["outlived"] == []
    # ... and nothing of the run is alive now
    assert alive(rec.measurement["pids_seen"]) == []
    assert _mine(run_root) == []


@pytest.mark.parametrize("mode", ["raw", "wrapper"])
def test_shell_engine_runs_jobs_and_leaves_nothing(run_root: str, mode: str) -> None:
    # enough jobs that their CPU spans several 10 ms clock ticks
    rec = _run(run_root, "shell", 120, warmup=5, mode=mode, until="done")
    assert rec.status == "ok", rec.error
    assert rec.tasks == 120 and rec.tasks_per_s > 0
    assert rec.cpu_user_s + rec.cpu_sys_s > 0
    _clean(rec, run_root)


def test_saga_fork_with_the_flush_patch_in_force(run_root: str) -> None:
    """The patched copy of radical.saga is the one the measured process imports."""
    spec = treat(
        RunSpec(
            target="saga",
            workload="noop",
            tasks=4,
            warmup=1,
            engine_options={"endpoint": "fork"},
            timeout_s=120,
            run_root=run_root,
            keep_run_dir=True,
        ),
        "src_saga_flush_nowait",
        load_catalogs(),
    )
    # Without saga's 0.1 s wait its bootstrap can race: the wrapper script is run before it
    # is on disk ("wrapper.sh: No such file"), a real cost of the patch (see
    # docs/job-submission.md). Under a loaded suite the race can lose every attempt (a
    # fresh-clone CI run lost five), so a run lost to it still counts if the patched copy is
    # what saga imported; any other failure fails the test.
    errors = []
    for _ in range(5):
        rec = measure(spec)
        facts = json.loads((Path(rec.measurement["run_dir"]) / "saga.json").read_text())
        assert facts["urls"] == ["fork://localhost/"]
        assert facts["pty_process"].startswith(rec.measurement["patched_tree"])
        _clean(rec, run_root)
        if rec.status == "ok":
            assert rec.tasks == 4 and rec.submit_s > 0
            break
        assert "wrapper.sh: No such file" in (rec.error or ""), rec.error
        errors.append(rec.error)
    print(f"{len(errors)} attempt(s) lost to the bootstrap race")


def test_saga_ssh_bulk_two_endpoints(run_root: str) -> None:
    """Bulk submission over two sshds; with the wrapper's fifo race fixed (untreated, saga's
    wrapper loses job ids under load and the run fails, which would make this test flaky)."""
    spec = RunSpec(
        target="saga",
        workload="noop",
        tasks=4,
        warmup=1,
        engine_options={"endpoint": "ssh", "mode": "bulk", "services": "2", "endpoints": "2"},
        timeout_s=120,
        run_root=run_root,
    )
    rec = measure(treat(spec, "src_saga_wrapper_fifo", load_catalogs()))
    assert rec.status == "ok", rec.error
    assert rec.tasks == 4
    _clean(rec, run_root)


def test_redis_pubsub_sharded(run_root: str) -> None:
    rec = _run(run_root, "redis-pubsub", 400, warmup=50, clients=2, shards=2)
    assert rec.status == "ok", rec.error
    assert rec.tasks == 400 and rec.tasks_per_s > 0
    _clean(rec, run_root)


def test_unreachable_endpoint_fails_the_run(run_root: str) -> None:
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    t0 = time.monotonic()
    rec = _run(run_root, "saga", 2, url=f"ssh://127.0.0.1:{port}/")
    assert rec.status == "failed"
    assert f"127.0.0.1:{port}" in rec.error
    assert time.monotonic() - t0 < 90
    _clean(rec, run_root)


def test_redis_port_in_use_fails_the_run(run_root: str) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        rec = _run(run_root, "redis-pubsub", 10, port=port)
    assert rec.status == "failed"
    assert "already in use" in rec.error
    _clean(rec, run_root)


def test_missing_executable_is_bad_input(run_root: str) -> None:
    spec = RunSpec(target="saga", workload="exec", params={"executable": "/nonexistent/x"}, tasks=1)
    with pytest.raises(PerflabError, match="/nonexistent/x"):
        measure(spec)


def test_killed_run_leaves_no_sshd_or_redis(tmp_path: Path) -> None:
    """SIGKILL the measuring process while sshd, saga and redis are up: the supervisor
    (parent-death signal) stops the whole tree."""
    code = (
        "import sys; from perflab.run.measure import measure; from perflab.spec import RunSpec;"
        "measure(RunSpec(target=sys.argv[1], workload='noop', tasks=100000, warmup=0,"
        "engine_options=dict(a.split('=') for a in sys.argv[3:]), run_root=sys.argv[2]))"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    for target, opts in (("saga", ["endpoint=ssh"]), ("redis-pubsub", ["clients=2"])):
        root = str(tmp_path / target)
        proc = subprocess.Popen([sys.executable, "-c", code, target, root, *opts], env=env)
        want = "sshd" if target == "saga" else "redis-server"
        deadline = time.monotonic() + 60
        while not any(want in p.name() for p in _mine(root)):
            assert time.monotonic() < deadline, f"{want} never started"
            time.sleep(0.2)
        time.sleep(1.0)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        deadline = time.monotonic() + 20
        while _mine(root) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert _mine(root) == []


@pytest.mark.parametrize("mode", ["raw", "wrapper"])
def test_a_newline_in_an_argument_is_not_a_second_shell_request(tmp_path: Path, mode: str) -> None:
    """The wrapper reads one request per line: a newline in a workload argument would start
    a request of its own (issue 24), so it refuses control characters. The raw shell parses
    the quoted newline as part of the word."""
    pwned = tmp_path / "pwned"
    spec = RunSpec(
        target="shell",
        workload="exec",
        params={"executable": "/bin/echo", "args": f"'a\nRUN 99 touch {pwned} #'"},
        tasks=1,
        warmup=0,
        engine_options={"mode": mode},
        timeout_s=60,
        run_root=str(tmp_path / "runs"),
    )
    rec = measure(spec)
    assert not pwned.exists(), f"the argument ran as shell code (run: {rec.status})"
    if mode == "raw":
        assert rec.status == "ok", rec.error
    else:
        assert rec.status == "failed"
        assert "control character" in (rec.error or "")
