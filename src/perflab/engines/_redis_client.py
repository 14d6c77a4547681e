"""A redis-pubsub client process: ``python -m perflab.engines._redis_client PORT ID SHARDS BYTES``.

Each event is an advert-attribute update: ``SET`` an attribute key, then ``PUBLISH`` the change
on the key's channel (crc32 of the key modulo the number of shards). It reads ``go N`` lines
on stdin, sends N events, and answers ``done N`` on stdout; ``ready`` once connected.

The server's password comes in the environment (``PASSWORD_ENV``): a command line is
readable by every local user, a process's environment only by its own user.
"""

from __future__ import annotations

import os
import sys
import zlib

#: The environment variable that carries the redis-server's password to a client.
PASSWORD_ENV = "PERFLAB_REDIS_PASSWORD"

#: Attribute keys per client: events cycle over them, so shards see a spread of keys.
KEYS = 64


def main(argv: list[str]) -> int:
    """Connect, say ``ready``, then publish the events each ``go N`` line asks for."""
    # imported here so that the engine can import PASSWORD_ENV without the redis package
    import redis

    port, cid, shards, nbytes = (int(x) for x in argv[1:5])
    # removed from the environment: nothing this process might start needs it
    password = os.environ.pop(PASSWORD_ENV, None)
    r = redis.Redis(host="127.0.0.1", port=port, password=password)
    r.ping()
    keys = [f"advert/client{cid}/attr{i}" for i in range(KEYS)]
    channels = [f"perflab.events.{zlib.crc32(k.encode()) % shards}" for k in keys]
    body = "x" * nbytes
    print("ready", flush=True)
    sent = 0
    for line in sys.stdin:
        if not line.startswith("go "):
            break
        for _ in range(int(line.split()[1])):
            i = sent % KEYS
            r.set(keys[i], sent)
            r.publish(channels[i], f"{keys[i]}:{sent}:{body}")
            sent += 1
        print(f"done {sent}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
