"""The delaying relay on its own: it delays by at least the round trip it was given, keeps
every byte in order, passes half-closes on, binds loopback only and dies with its parent;
through it, a real sshd still wants the run's key."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from conftest import ROOT
from perflab import PerflabError
from perflab.engines.loopback import Relay, Sshd, port_open
from perflab.net import net_env, resolve_net, shaped
from perflab.net.relay import Link

ENV = {**os.environ, "PYTHONPATH": str(ROOT / "src")}


class Echo:
    """A loopback echo server (one thread per connection); on EOF it answers ``bye`` and
    closes, so a half-close through the relay shows."""

    def __init__(self) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    @staticmethod
    def _serve(conn: socket.socket) -> None:
        with conn:
            while data := conn.recv(65536):
                conn.sendall(data)
            conn.sendall(b"bye")


@pytest.fixture
def echo() -> Iterator[Echo]:
    e = Echo()
    yield e
    e.sock.close()


def _relay(tmp_path: Path, target: int, rtt_ms: float, mbit: float | None = None) -> Relay:
    relay = Relay(tmp_path / "net", target, rtt_ms, mbit)
    relay.start()
    return relay


def _round_trip(port: int, payload: bytes) -> tuple[float, bytes]:
    with socket.create_connection(("127.0.0.1", port)) as s:
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        t0 = time.perf_counter()
        sender = threading.Thread(target=s.sendall, args=(payload,))
        sender.start()  # send and receive at once: a large payload fills both directions
        got = bytearray()
        while len(got) < len(payload):
            chunk = s.recv(1 << 20)
            assert chunk, "the relay closed the connection early"
            got += chunk
        elapsed = time.perf_counter() - t0
        sender.join()
    return elapsed, bytes(got)


@pytest.mark.parametrize("rtt_ms", [0.0, 30.0])
def test_every_byte_comes_back_in_order_no_sooner_than_the_round_trip(
    tmp_path: Path, echo: Echo, rtt_ms: float
) -> None:
    relay = _relay(tmp_path, echo.port, rtt_ms)
    try:
        for size in (1, 5000, 3_000_000):
            payload = os.urandom(size)
            elapsed, got = _round_trip(relay.port, payload)
            assert got == payload
            # a lower bound is what the relay promises (an upper one would time the machine)
            assert elapsed >= rtt_ms / 1000 * (1 - 1e-6)
    finally:
        relay.stop()


def test_a_rate_holds_each_direction_to_its_megabits(tmp_path: Path, echo: Echo) -> None:
    relay = _relay(tmp_path, echo.port, 2.0, mbit=40.0)
    try:
        payload = os.urandom(1_000_000)
        elapsed, got = _round_trip(relay.port, payload)
        assert got == payload
        assert elapsed >= len(payload) * 8 / 40e6 + 0.002 * (1 - 1e-6)
    finally:
        relay.stop()


def test_the_link_model_delivers_in_order_at_its_rate() -> None:
    link = Link(delay_s=0.01, bytes_per_s=1000.0)
    times = [link.deliver_at(now, n) for now, n in ((0.0, 100), (0.0, 100), (5.0, 10))]
    assert times == pytest.approx([0.11, 0.21, 5.02])
    assert times == sorted(times)
    assert Link(0.0).transparent and not Link(0.0, 1.0).transparent


def test_a_half_close_passes_through_and_the_reply_still_arrives(
    tmp_path: Path, echo: Echo
) -> None:
    relay = _relay(tmp_path, echo.port, 10.0)
    try:
        with socket.create_connection(("127.0.0.1", relay.port)) as s:
            s.sendall(b"last words")
            s.shutdown(socket.SHUT_WR)
            got = b""
            while chunk := s.recv(4096):
                got += chunk
        assert got == b"last wordsbye"
    finally:
        relay.stop()


def test_the_relay_listens_on_loopback_only_and_is_gone_after_stop(
    tmp_path: Path, echo: Echo
) -> None:
    relay = _relay(tmp_path, echo.port, 0.0)
    assert relay.proc is not None
    pid = relay.proc.pid
    listening = [
        c.laddr for c in psutil.Process(pid).net_connections("tcp") if c.status == "LISTEN"
    ]
    relay.stop()
    assert [(a.ip, a.port) for a in listening] == [("127.0.0.1", relay.port)]
    assert not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    assert not port_open(relay.port)


def test_a_relay_whose_parent_was_killed_ends_by_itself(echo: Echo) -> None:
    """A run killed outright: even if nothing stops its relay by PID, it does not linger."""
    from perflab.engines.loopback import free_port

    port = free_port()
    argv = [sys.executable, "-m", "perflab.net.relay", "--listen", str(port),
            "--target", str(echo.port)]  # fmt: skip
    parent = subprocess.Popen(
        [sys.executable, "-c", f"import subprocess, time; subprocess.Popen({argv!r}); "
         "time.sleep(600)"],
        env=ENV,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 20
        while not port_open(port) and time.monotonic() < deadline:
            time.sleep(0.05)
        kids = psutil.Process(parent.pid).children()
        assert len(kids) == 1 and port_open(port)
        parent.kill()
        parent.wait()
        gone, alive = psutil.wait_procs(kids, timeout=20)
        assert alive == [] and gone
    finally:
        if parent.poll() is None:
            parent.kill()
        for k in psutil.Process().children(recursive=True):
            if "perflab.net.relay" in " ".join(k.cmdline()):
                k.kill()


def test_bad_relay_arguments_are_refused() -> None:
    for bad, why in (
        (["--listen", "0", "--target", "22"], "--listen 0 is not a TCP port"),
        (["--listen", "9", "--target", "22", "--rtt-ms", "-1"], "--rtt-ms -1.0 must be"),
    ):
        r = subprocess.run([sys.executable, "-m", "perflab.net.relay", *bad],
                           capture_output=True, text=True, env=ENV)  # fmt: skip
        assert r.returncode == 2 and why in r.stderr.strip().splitlines()[-1]


def test_net_levels_are_numbers_in_range_whatever_form_they_come_in() -> None:
    assert resolve_net("saga", {"net_rtt_ms": "200", "net_mbit": 5}) == {
        "net_rtt_ms": 200.0, "net_mbit": 5.0,
    }  # fmt: skip
    for bad in ({"net_rtt_ms": "x"}, {"net_rtt_ms": True}, {"net_mbit": 0}, {"net_rtt_ms": 1e5}):
        with pytest.raises(PerflabError, match=f"engine 'e': option {next(iter(bad))} must"):
            resolve_net("e", dict(bad))


def test_net_options_say_what_a_run_used() -> None:
    assert not shaped({"net_rtt_ms": None})
    assert shaped({"net_rtt_ms": 0})
    assert net_env({}) == {"mechanism": "direct"}
    assert net_env({"net_rtt_ms": 5, "net_mbit": None}) == {
        "mechanism": "relay", "rtt_ms": 5.0, "mbit": None,
    }  # fmt: skip


def test_through_the_relay_sshd_still_wants_the_runs_key(tmp_path: Path) -> None:
    """The relay carries bytes, not trust: the run's key gets in, a stranger's does not."""
    sshd = Sshd(tmp_path / "sshd")
    sshd.start()
    relay = None
    try:
        relay = _relay(tmp_path, sshd.port, 5.0)
        ssh = str(sshd.client_bin / "ssh")
        base = ["-p", str(relay.port), "-o", "ControlMaster=no", "127.0.0.1", "true"]
        ok = subprocess.run([ssh, *base], capture_output=True, text=True, timeout=60)
        assert ok.returncode == 0, ok.stderr
        stranger = tmp_path / "stranger"
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(stranger)],
                       check=True)  # fmt: skip
        no = subprocess.run(
            ["ssh", "-F", "/dev/null", "-i", str(stranger), "-o", "IdentitiesOnly=yes",
             "-o", "BatchMode=yes", "-o", "StrictHostKeyChecking=no",
             "-o", "UserKnownHostsFile=/dev/null", *base],
            capture_output=True, text=True, timeout=60,
        )  # fmt: skip
        assert no.returncode == 255 and "Permission denied" in no.stderr
    finally:
        if relay is not None:
            relay.stop()
        sshd.stop()
