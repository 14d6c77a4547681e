"""``redis-pubsub``: the job-submission study's pub/sub event-rate experiment on a
redis-server that perflab starts on a loopback port.

One listener (this process) and ``clients`` client processes that keep updating advert
attributes (``SET`` + ``PUBLISH``, see ``_redis_client``); a task is one event, counted when
the listener has received it, so tasks/s is events/s. ``shards=K`` hashes the
events over K channels with one listener thread (and connection) each: the fix proposed
for the plateau the original study traced to the one thread that monitors the channel.

The server takes a random per-run password (see ``RedisServer``): the listener and the
clients authenticate once per connection, so events forged by another local user neither
count nor reach the listener, and the events themselves cost what they cost before.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from typing import IO, Any, ClassVar

from perflab.engines import ENGINES
from perflab.engines._redis_client import PASSWORD_ENV
from perflab.engines.base import BatchEngine
from perflab.engines.jobs import JobFailed, batch_result, count, shares
from perflab.engines.loopback import RedisServer, stop_pids
from perflab.options import Opt
from perflab.tasks import CommandTasks

#: Seconds a batch may take beyond its last event before the run fails.
BATCH_TIMEOUT_S = 120.0


@ENGINES.register
class RedisPubSubEngine(BatchEngine):
    """Event rate of redis pub/sub: N publishing clients, one listener, K channel shards."""

    name = "redis-pubsub"
    packages = ("redis",)
    options: ClassVar[dict[str, Opt]] = {
        **BatchEngine.options,
        "clients": Opt(own_check=True, default=1, help="Publisher processes."),
        "shards": Opt(own_check=True, default=1, help="Channels, one listener thread each."),
        "port": Opt(own_check=True, default=0, help="redis-server's port (0: a free one)."),
    }

    @classmethod
    def resolve_options(cls, options: dict[str, Any]) -> dict[str, Any]:
        m = super().resolve_options(options)
        m["clients"] = count(cls.name, m, "clients")
        m["shards"] = count(cls.name, m, "shards")
        m["port"] = count(cls.name, m, "port", low=0)
        return m

    def start(self) -> None:
        import redis

        self.redis = redis
        self.server = RedisServer(self.run_dir / "redis", int(self.opts["port"]))
        self.clients: list[subprocess.Popen[str]] = []
        self.stop_flag = threading.Event()
        self.cond = threading.Condition()
        self.received = 0
        self.first: float | None = None
        self.last = 0.0
        self.server.start()
        k = int(self.opts["shards"])
        subscribed = threading.Barrier(k + 1)
        self.listeners = [
            threading.Thread(target=self._listen, args=(i, subscribed), daemon=True)
            for i in range(k)
        ]
        for t in self.listeners:
            t.start()
        subscribed.wait(timeout=30)

    def _listen(self, shard: int, subscribed: threading.Barrier) -> None:
        conn = self.redis.Redis(
            host="127.0.0.1", port=self.server.port, password=self.server.password
        )
        ps = conn.pubsub(ignore_subscribe_messages=True)
        ps.subscribe(f"perflab.events.{shard}")
        ps.get_message(timeout=5)
        subscribed.wait(timeout=30)
        try:
            while not self.stop_flag.is_set():
                msg = ps.get_message(timeout=0.2)
                if msg is None:
                    continue
                now = time.perf_counter()
                with self.cond:
                    self.received += 1
                    self.first = self.first or now
                    self.last = now
                    self.cond.notify_all()
        finally:
            ps.close()
            conn.close()

    def _start_clients(self, nbytes: int) -> None:
        k, port = int(self.opts["shards"]), self.server.port
        # the password in the clients' environment only (never on their command lines)
        env = {**os.environ, PASSWORD_ENV: self.server.password}
        for cid in range(int(self.opts["clients"])):
            argv = [sys.executable, "-m", "perflab.engines._redis_client"]
            argv += [str(port), str(cid), str(k), str(nbytes)]
            proc = subprocess.Popen(
                argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env
            )
            self.clients.append(proc)
        for proc in self.clients:
            if _readline(proc.stdout) != "ready":
                raise JobFailed(f"a redis client did not connect (exit {proc.poll()})")

    def run_batch(self, tasks: CommandTasks, n: int) -> dict[str, Any]:
        if not self.clients:
            self._start_clients(int(tasks.p.get("arg_bytes", 0)))
        with self.cond:
            self.received, self.first, self.last = 0, None, 0.0
        parts = shares(n, len(self.clients))
        t0 = time.perf_counter()
        for proc, k in zip(self.clients, parts, strict=True):
            assert proc.stdin is not None
            proc.stdin.write(f"go {k}\n")
            proc.stdin.flush()
        for proc in self.clients:
            if not _readline(proc.stdout).startswith("done"):
                raise JobFailed(f"a redis client stopped publishing (exit {proc.poll()})")
        submitted = time.perf_counter()
        deadline = time.monotonic() + BATCH_TIMEOUT_S
        with self.cond:
            while self.received < n:
                if time.monotonic() > deadline:
                    raise JobFailed(f"listener received {self.received} of {n} events")
                self.cond.wait(0.5)
            return batch_result(n, t0, submitted, self.first, self.last)

    def shutdown(self) -> None:
        for proc in getattr(self, "clients", []):
            try:
                if proc.stdin is not None:
                    proc.stdin.close()
            except OSError:
                pass
        stop_pids([p.pid for p in getattr(self, "clients", [])])
        if hasattr(self, "stop_flag"):
            self.stop_flag.set()
            for t in getattr(self, "listeners", []):
                t.join(timeout=2)
        if hasattr(self, "server"):
            self.server.stop()


def _readline(out: IO[str] | None) -> str:
    assert out is not None
    return out.readline().strip()
