"""The redis-pubsub engine's redis-server against another local user (uid ``nobody``): he
must not publish events that count in the measurement, nor run commands (issue 24)."""

from __future__ import annotations

import os
import time
from pathlib import Path

import psutil
import pytest

from attacker import as_nobody, listeners, needs_root, public
from perflab.engines.redis_pubsub import RedisPubSubEngine
from perflab.workloads import WORKLOADS

pytestmark = [pytest.mark.slow, needs_root]

#: As nobody: forge an event on the listener's channel, read the server's directory, and
#: (the worst) point its dump file elsewhere. Each outcome is the reply or the error.
ATTACK = """
def command(*words):
    with socket.create_connection(("127.0.0.1", PORT), timeout=5) as s:
        s.sendall(b"*%d\\r\\n" % len(words) + b"".join(
            b"$%d\\r\\n%s\\r\\n" % (len(w), w.encode()) for w in words))
        return s.recv(4096).decode(errors="replace").strip()
report(
    publish=command("PUBLISH", "perflab.events.0", "advert/forged:0:"),
    config_get=command("CONFIG", "GET", "dir"),
    config_set=command("CONFIG", "SET", "dbfilename", "forged.rdb"),
    info=command("INFO", "server")[:60],
)
"""


def test_another_user_cannot_publish_to_or_command_the_runs_redis(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    run_dir.mkdir(mode=0o700)
    engine = RedisPubSubEngine(run_dir, {"clients": "1"})
    try:
        engine.start()
        # the run's own clients get through
        result = engine.run_batch(WORKLOADS.get("noop")({}), 20)
        assert result is not None and result["tasks"] == 20
        socks = listeners(os.getpid())
        print(f"redis-server listeners: {socks}")
        assert public(socks) == []
        assert any(port == engine.server.port for _, port, _ in socks)
        before = engine.received
        out = as_nobody(
            f"PORT={engine.server.port}\n" + ATTACK, preimport=("socket", "encodings.idna")
        )
        time.sleep(0.5)  # a forged event would have reached the listener by now
        print(f"attacker: {out}")
        assert engine.received == before, f"a forged event counted: {out}"
        assert all(v.startswith("-NOAUTH") for v in out.values()), out
        # the password is on no command line (the server's or its clients')
        password = engine.server.password
        procs = [engine.server.proc, *engine.clients]
        for proc in procs:
            assert proc is not None
            assert password not in " ".join(psutil.Process(proc.pid).cmdline())
        config = engine.server.config_file
        assert config.stat().st_mode & 0o777 == 0o600
        assert f"requirepass {password}" in config.read_text()
        assert (run_dir / "redis").stat().st_mode & 0o777 == 0o700
    finally:
        engine.shutdown()
