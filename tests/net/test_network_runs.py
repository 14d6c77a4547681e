"""``net_rtt_ms`` in real runs: HTEX's pools reach the interchange through the relay (the
record says so, the relay is gone afterwards, the interchange still demands CurveZMQ through
it); saga over ssh likewise; a level out of range is refused before anything runs."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import time
from pathlib import Path

import psutil
import pytest

from conftest import PERFLAB, ROOT, alive, perflab, perflab_json

HTEX = ["run", "--target", "parsl-htex", "--workload", "noop", "--workers", "1",
        "--warmup", "5"]  # fmt: skip


def _relay_pids(rec: dict) -> list[int]:
    return [
        p["pid"] for p in rec["measurement"]["processes"] if "perflab.net.relay" in p["cmdline"]
    ]


@pytest.mark.slow
def test_an_htex_run_behind_5_ms_completes_says_so_and_leaves_no_relay(tmp_path: Path) -> None:
    rec = perflab_json(*HTEX, "--tasks", "40", "--treat", "net_rtt_ms=5", cwd=tmp_path)
    assert rec["status"] == "ok", rec["error"]
    assert rec["tasks"] == 40
    assert rec["env"]["net"] == {"mechanism": "relay", "rtt_ms": 5.0, "mbit": None}
    assert rec["treatments"] == ["net_rtt_ms=5"]
    relays = _relay_pids(rec)
    assert len(relays) == 1  # one HTEX executor, one relay, inside the measured tree
    seen = [p for p in rec["measurement"]["pids_seen"] if p[0] in relays]
    assert seen and alive(seen) == []


@pytest.mark.parametrize(
    ("how", "named"),
    [
        (["--treat", "net_rtt_ms=10001"], "net_rtt_ms"),
        (["--treat", "net_rtt_ms=-5"], "net_rtt_ms"),
        (["--opt", "net_rtt_ms=1e9"], "net_rtt_ms"),
        (["--treat", "net_mbit=0"], "net_mbit"),
    ],
)
def test_a_latency_out_of_range_is_one_line_exit_2_nothing_stored(
    tmp_path: Path, how: list[str], named: str
) -> None:
    r = perflab(*HTEX, "--tasks", "5", *how, cwd=tmp_path)
    assert r.returncode == 2, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and named in lines[0]
    assert not list(tmp_path.rglob("*.db")) and not list(tmp_path.rglob("result.json"))


@pytest.mark.parametrize("target", ["saga", "shell"])
def test_job_engines_refuse_a_network_without_ssh(tmp_path: Path, target: str) -> None:
    r = perflab("run", "--target", target, "--workload", "noop", "--tasks", "3",
                "--treat", "net_rtt_ms=5", cwd=tmp_path)  # fmt: skip
    assert r.returncode == 2
    assert "net_rtt_ms" in r.stderr and "endpoint=ssh" in r.stderr


def _relay_port(root: int, deadline: float) -> int | None:
    """The listen port of the relay in ``root``'s tree, once worker pools exist."""
    while time.monotonic() < deadline:
        try:
            tree = psutil.Process(root).children(recursive=True)
            cmds = [p.cmdline() for p in tree]
        except psutil.Error:
            cmds = []
        pools = any("process_worker_pool.py" in " ".join(c) for c in cmds)
        for c in cmds:
            if pools and "perflab.net.relay" in c:
                return int(c[c.index("--listen") + 1])
        time.sleep(0.2)
    return None


def _greeting(port: int) -> tuple[bytes, bytes]:
    """Speak ZMTP 3.0 with the NULL mechanism (no keys) to ``port``: the server's greeting,
    and whatever it sends after ours (b"" once it closes). The server shows its mechanism
    only after our version byte, so ours goes out in two parts."""
    ours = b"\xff" + b"\x00" * 8 + b"\x7f" + bytes([3, 0]) + b"NULL".ljust(20, b"\x00")
    ours += b"\x00" * 32  # as-server, filler
    with socket.create_connection(("127.0.0.1", port), timeout=20) as s:
        s.sendall(ours[:11])
        theirs = b""
        while len(theirs) < 64 and (chunk := s.recv(64 - len(theirs))):
            theirs += chunk
        s.sendall(ours[11:])
        after = b""
        try:
            while chunk := s.recv(4096):
                after += chunk
        except (TimeoutError, ConnectionResetError):
            after += b"<no close>"
    return theirs, after


@pytest.mark.slow
def test_through_the_relay_the_interchange_still_demands_curve(tmp_path: Path) -> None:
    """A client without the run's keys reaches the interchange through the relay, is told
    CURVE, and is let go without a session."""
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    proc = subprocess.Popen(
        [*PERFLAB, *HTEX, "--tasks", "1200", "--treat", "net_rtt_ms=1", "--json"],
        cwd=tmp_path, env=env, stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        port = _relay_port(proc.pid, time.monotonic() + 90)
        assert port is not None, "no relay with worker pools behind it appeared"
        theirs, after = _greeting(port)
        assert theirs[:1] == b"\xff" and theirs[10:11] == b"\x03"
        assert theirs[12:32].rstrip(b"\x00") == b"CURVE"
        assert after == b""  # closed: no session without the run's keys
        out, _ = proc.communicate(timeout=180)
        assert json.loads(out)["status"] == "ok"
    finally:
        if proc.poll() is None:
            proc.terminate()  # perflab stops its whole tree on SIGTERM
            proc.wait(30)


@pytest.mark.slow
def test_saga_over_ssh_behind_a_round_trip(tmp_path: Path) -> None:
    rec = perflab_json("run", "--target", "saga", "--workload", "noop", "--tasks", "6",
                       "--warmup", "1", "--opt", "endpoint=ssh", "--treat", "net_rtt_ms=20",
                       cwd=tmp_path)  # fmt: skip
    assert rec["status"] == "ok", rec["error"]
    assert rec["env"]["net"] == {"mechanism": "relay", "rtt_ms": 20.0, "mbit": None}
    seen = [p for p in rec["measurement"]["pids_seen"] if p[0] in _relay_pids(rec)]
    assert seen and alive(seen) == []


@pytest.mark.slow
def test_the_shell_wrapper_piped_over_ssh_behind_a_round_trip(tmp_path: Path) -> None:
    """The seed's row 3: requests streamed through ssh to the wrapper, behind the relay."""
    rec = perflab_json("run", "--target", "shell", "--workload", "noop", "--tasks", "30",
                       "--warmup", "2", "--opt", "mode=wrapper", "--opt", "endpoint=ssh",
                       "--treat", "net_rtt_ms=20", cwd=tmp_path)  # fmt: skip
    assert rec["status"] == "ok", rec["error"]
    assert rec["tasks"] == 30
    assert rec["env"]["net"] == {"mechanism": "relay", "rtt_ms": 20.0, "mbit": None}
    cmds = " ".join(p["cmdline"] for p in rec["measurement"]["processes"])
    assert "sshd" in cmds and "shell_wrapper.sh" in cmds
    assert alive(rec["measurement"]["pids_seen"]) == []
