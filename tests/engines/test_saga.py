"""The saga engine's command lines (issue 24): saga's shell adaptor pastes the job's
executable and arguments into a shell line, and sends it through a pty, so a workload
argument (``--param args=...``) must reach the job as one word and never run as code."""

from __future__ import annotations

import os
import shlex
import threading
from pathlib import Path

import psutil
import pytest

from attacker import listeners, public
from perflab.factors.catalog import load_catalogs
from perflab.factors.treat import treat
from perflab.run.measure import measure
from perflab.run.record import RunRecord
from perflab.spec import RunSpec

pytestmark = pytest.mark.slow

#: A job that records its arguments, one ``[word]`` line each, then ``---``.
ARGV_SCRIPT = """#!/bin/sh
for a in "$@"; do printf '[%s]\\n' "$a"; done >> {out}
echo --- >> {out}
"""


def _exec_run(run_root: Path, exe: Path, args: str, **opts: str) -> RunRecord:
    spec = RunSpec(
        target="saga",
        workload="exec",
        params={"executable": str(exe), "args": args},
        tasks=2,
        warmup=0,
        engine_options={"until": "done", **opts},
        timeout_s=120,
        run_root=str(run_root),
    )
    if opts.get("mode") == "bulk":
        # saga's own wrapper races in bulk submission ("tail: cannot open …/state", a job
        # with no id; docs/job-submission.md): its fifo fix keeps this test about quoting alone
        spec = treat(spec, ["src_saga_wrapper_fifo"], load_catalogs())
    return measure(spec)


def _argv_job(tmp_path: Path) -> tuple[Path, Path]:
    exe, out = tmp_path / "argv.sh", tmp_path / "argv.txt"
    exe.write_text(ARGV_SCRIPT.format(out=shlex.quote(str(out))))
    exe.chmod(0o700)
    return exe, out


@pytest.mark.parametrize(
    ("mode", "endpoint"),
    [("run_job", "fork"), ("create_job", "fork"), ("bulk", "fork"), ("run_job", "ssh")],
)
def test_workload_arguments_do_not_run_as_shell_code(
    tmp_path: Path, mode: str, endpoint: str
) -> None:
    exe, out = _argv_job(tmp_path)
    pwned = [tmp_path / f"pwned{i}" for i in range(3)]
    # as a user would type it: --param args="x; touch .../pwned0 '$(touch ...)' ..."
    args = f"x; touch {pwned[0]} '$(touch {pwned[1]})' '`touch {pwned[2]}`'"
    rec = _exec_run(tmp_path / "runs", exe, args, mode=mode, endpoint=endpoint)
    ran = sorted(p.name for p in tmp_path.iterdir() if p.name.startswith("pwned"))
    assert ran == [], f"the argument ran as shell code ({ran} created; run: {rec.status})"
    assert rec.status == "ok", rec.error
    assert out.read_text() == _record(shlex.split(args)) * 2


@pytest.mark.parametrize("mode", ["run_job", "create_job"])
def test_workload_arguments_reach_the_job_unchanged(tmp_path: Path, mode: str) -> None:
    """Words that mean something to a shell, to saga's ``printf %b`` or to its quoting."""
    exe, out = _argv_job(tmp_path)
    words = ["a b", "", "\\", "*", "%s %b \\c \\n", '"q"', "$HOME", "é", "it's"]
    if mode == "run_job":  # saga's run_job cannot carry a single quote (see saga.py)
        words.remove("it's")
    rec = _exec_run(tmp_path / "runs", exe, shlex.join(words), mode=mode)
    assert rec.status == "ok", rec.error
    assert out.read_text() == _record(words) * 2


def _record(words: list[str]) -> str:
    """What ARGV_SCRIPT writes for one job run with ``words``."""
    return "".join(f"[{w}]\n" for w in words) + "---\n"


@pytest.mark.parametrize("mode", ["run_job", "create_job"])
def test_a_control_character_in_an_argument_is_refused(tmp_path: Path, mode: str) -> None:
    """saga types each job's line into a pty: ^U would erase what precedes it, and the
    rest of the line would run as a command of saga's wrapper shell."""
    exe, _ = _argv_job(tmp_path)
    pwned = tmp_path / "pwned"
    rec = _exec_run(tmp_path / "runs", exe, f"'\x15touch {pwned}'", mode=mode)
    ran = [p.name for p in tmp_path.iterdir() if p.name.startswith("pwned")]
    assert ran == [], f"the argument ran as shell code ({ran} created; run: {rec.status})"
    assert rec.status == "failed"
    assert "control character" in (rec.error or "")


def test_run_job_refuses_a_single_quote(tmp_path: Path) -> None:
    exe, _ = _argv_job(tmp_path)
    rec = _exec_run(tmp_path / "runs", exe, '"it\'s"', mode="run_job")
    assert rec.status == "failed"
    assert "single quote" in (rec.error or "")


@pytest.mark.parametrize("endpoint", ["fork", "ssh"])
def test_detached_processes_of_the_run_are_stopped_by_the_engine(
    tmp_path: Path, endpoint: str
) -> None:
    """saga's wrapper double-forks (its idle checker sleeps 300 s), and so may a job: out
    of reach of a walk over descendants, they are found by the run's marks (see saga.py)."""
    exe = tmp_path / "detach.sh"
    exe.write_text("#!/bin/sh\nPERFLAB_TEST_MARK=1 setsid sleep 300 </dev/null >/dev/null 2>&1 &\n")
    exe.chmod(0o700)
    rec = _exec_run(tmp_path / "runs", exe, "", endpoint=endpoint)
    assert rec.status == "ok", rec.error
    assert rec.measurement["outlived"] == []
    left = []
    for p in psutil.process_iter(["environ"]):
        env = p.info["environ"] or {}
        if env.get("PERFLAB_TEST_MARK") and str(tmp_path) in " ".join(env.values()):
            left.append(p.pid)
    assert left == []


def test_an_ssh_run_listens_on_loopback_only(tmp_path: Path) -> None:
    """Every listener of the run's tree (two sshds here), sampled while it runs."""
    seen: set[tuple[str, int, str]] = set()
    done = threading.Event()

    def watch() -> None:
        while not done.wait(0.1):
            try:
                socks = listeners(os.getpid())
            except Exception:  # a process of the tree ended while being read
                continue
            seen.update((ip, port, _name(pid)) for ip, port, pid in socks)

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    try:
        exe, _ = _argv_job(tmp_path)
        rec = _exec_run(tmp_path / "runs", exe, "a", endpoint="ssh", endpoints="2")
    finally:
        done.set()
        watcher.join()
    assert rec.status == "ok", rec.error
    print(f"saga ssh run listeners: {sorted(seen)}")
    assert len({port for _, port, name in seen if name == "sshd"}) == 2
    assert public([(ip, port, 0) for ip, port, _ in seen]) == []


def _name(pid: int) -> str:
    try:
        return str(psutil.Process(pid).name())
    except psutil.Error:
        return "?"


def test_the_users_start_up_files_do_not_reach_a_fork_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """saga's fork:// shell is ``$SHELL -i``; an interactive bash would run ~/.bashrc, and one
    that hangs (pyenv's init on a stale lock waits a minute) would fail every job service."""
    home = tmp_path / "home"
    home.mkdir()
    for name in (".bashrc", ".profile"):
        (home / name).write_text("exec sleep 120\n")  # exec: nothing outlives the run
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("SHELL", "/bin/bash")
    exe, out = _argv_job(tmp_path)
    rec = _exec_run(tmp_path / "runs", exe, "x", mode="run_job", endpoint="fork")
    assert rec.status == "ok", rec.error
    assert out.read_text() == _record(["x"]) * 2
