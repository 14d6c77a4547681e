"""The dask engine's cluster against another local user (uid ``nobody``): he must not run
code on its workers, nor find anything listening beyond loopback (issue 24)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from attacker import as_nobody, listeners, needs_root, public
from perflab.engines.dask_local import DaskEngine

pytestmark = [pytest.mark.slow, needs_root]

#: As nobody: connect a client to the scheduler and run ``os.getuid`` on every worker
#: (``os.system`` would do anything else the same way) -- over TLS with a certificate of his
#: own making (the one thing he lacks is the run's), or over plain TCP.
ATTACK = """
from distributed.security import Security
try:
    own = Security.temporary() if ADDRESS.startswith("tls") else None
    client = distributed.Client(ADDRESS, timeout=5, security=own)
    report(ran_as=sorted(set(client.run(os.getuid).values())))
except Exception as exc:
    report(refused=f"{type(exc).__name__}: {exc}"[:300])
"""

# His own certificate: made before the drop (cryptography imports lazily; see attacker.py).
OWN_CERT = "from distributed.security import Security\nown = Security.temporary()\n"
HANDSHAKE = """
import socket, ssl
ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
ctx.check_hostname, ctx.verify_mode = False, ssl.CERT_NONE
fd, path = tempfile.mkstemp()  # his own files, 0600, in the shared /tmp
with os.fdopen(fd, "w") as f:
    f.write(own.tls_client_cert + own.tls_client_key)
ctx.load_cert_chain(path)
try:
    with ctx.wrap_socket(socket.create_connection((HOST, PORT), timeout=5)) as s:
        s.sendall(b"\\0" * 8)
        got = s.recv(64)
    report(accepted=len(got)) if got else report(refused="closed without a word")
except (ssl.SSLError, OSError) as exc:
    report(refused=f"{type(exc).__name__}: {exc}"[:300])
"""
PRE = ("distributed", "distributed.comm.tcp", "distributed.security", "tempfile", "ssl")


def test_another_user_cannot_run_code_on_the_dask_workers(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    run_dir.mkdir(mode=0o700)
    engine = DaskEngine(run_dir, {"workers": 2})
    try:
        engine.start()
        assert engine.submit(pow, 2, 5).result(timeout=30) == 32  # the run's own client works
        socks = listeners(os.getpid())
        print(f"dask listeners: {socks}")
        assert socks and public(socks) == []
        assert all(port != 8787 for _, port, _ in socks)  # no dashboard on its fixed port
        address = engine.cluster.scheduler_address
        # a plain-TCP address would be reachable by anyone; strip the scheme to try both
        for target in {address, "tcp://" + address.split("://", 1)[1]}:
            out = as_nobody(
                f"ADDRESS={target!r}\n" + ATTACK,
                preimport=("distributed", "distributed.comm.tcp", "distributed.security"),
            )
            print(f"attacker at {target}: {out}")
            assert "ran_as" not in out, f"uid nobody ran code on the workers: {out}"
        # He skips checking the server and presents his own certificate: the server must end
        # the handshake, since only the run's certificate admits a peer.
        host, port = address.split("://", 1)[1].rsplit(":", 1)
        out = as_nobody(
            f"HOST, PORT = {host!r}, {port}\n" + HANDSHAKE, preimport=PRE, prepare=OWN_CERT
        )
        print(f"attacker's handshake: {out}")
        assert out.get("refused"), out
    finally:
        engine.shutdown()
