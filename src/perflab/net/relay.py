"""A delaying TCP relay: the network between a run's workers and its server, made by perflab.

    python -m perflab.net.relay --listen PORT --target PORT --rtt-ms 5 [--mbit 100]

Listens on 127.0.0.1:``listen`` and forwards each connection to 127.0.0.1:``target`` (the
run's own server, nothing else: the target host is not an argument). Every byte is held
for half the round-trip time in each direction, so a request and its reply cost one
``rtt_ms``; with ``mbit``, each direction is also a link of that many megabits per second
(a chunk waits until the link is free, then occupies it for ``8·len/mbit`` µs). Delivery
times never decrease, so order is kept; data waits in a bounded queue (the reader pauses
when it is full, as a sender does when TCP's window is), so nothing is dropped.

Not modelled: TCP's handshake (a new connection's first bytes pay the one-way delay, not an
extra round trip), loss, jitter. The relay only moves bytes: whatever the server requires
of its clients (CurveZMQ keys, ssh keys) it still requires through the relay.

The relay ends on SIGTERM/SIGINT, and by itself when its parent is gone (a killed run's
relay does not outlive it even if the tree kill missed it).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import signal
import socket
import sys
from dataclasses import dataclass

HOST = "127.0.0.1"
CHUNK = 64 * 1024
#: Chunks in flight per direction before the reader waits (16 MiB).
QUEUE_CHUNKS = 256
#: Seconds between checks that the parent still lives.
PARENT_CHECK_S = 0.5


@dataclass
class Link:
    """One direction of the network: a one-way delay and an optional rate."""

    delay_s: float
    bytes_per_s: float | None = None
    busy_until: float = 0.0

    def deliver_at(self, now: float, n: int) -> float:
        """When ``n`` bytes read at ``now`` reach the other end (non-decreasing in ``now``)."""
        if self.bytes_per_s is None:
            return now + self.delay_s
        start = max(now, self.busy_until)
        self.busy_until = start + n / self.bytes_per_s
        return self.busy_until + self.delay_s

    @property
    def transparent(self) -> bool:
        return self.delay_s == 0 and self.bytes_per_s is None


def _nodelay(writer: asyncio.StreamWriter) -> None:
    # the relay must not add Nagle's wait to small messages the endpoints send at once
    sock = writer.get_extra_info("socket")
    if sock is not None:
        with contextlib.suppress(OSError):
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)


async def _copy(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    """No delay, no rate: bytes straight through (the relay's own cost, nothing added)."""
    while data := await reader.read(CHUNK):
        writer.write(data)
        await writer.drain()
    if writer.can_write_eof():
        writer.write_eof()


async def _delayed(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, link: Link) -> None:
    """Each chunk written at its delivery time; EOF travels like data."""
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[tuple[float, bytes]] = asyncio.Queue(QUEUE_CHUNKS)
    broken = asyncio.Event()

    async def send() -> None:
        try:
            while True:
                at, data = await queue.get()
                wait = at - loop.time()
                if wait > 0:
                    await asyncio.sleep(wait)
                if not data:
                    if writer.can_write_eof():
                        writer.write_eof()
                    return
                writer.write(data)
                await writer.drain()
        except (ConnectionError, OSError):
            broken.set()
            while True:  # the peer is gone: discard, so the reader never waits on a full queue
                await queue.get()

    sender = asyncio.create_task(send())
    try:
        while not broken.is_set():
            data = await reader.read(CHUNK)
            await queue.put((link.deliver_at(loop.time(), len(data)), data))
            if not data:
                await sender
                break
        if broken.is_set():
            raise ConnectionResetError("the receiving side closed")
    finally:
        sender.cancel()


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, link: Link) -> bool:
    """Move one direction until EOF (True: passed on) or a failure (False)."""
    try:
        await (_copy(reader, writer) if link.transparent else _delayed(reader, writer, link))
    except (ConnectionError, OSError):
        return False
    return True


class Relay:
    """The relay's connections: accepted on ``listen``, each forwarded to ``target``."""

    def __init__(self, target: int, rtt_ms: float, mbit: float | None = None) -> None:
        self.target = target
        self.delay_s = rtt_ms / 2000.0
        self.bytes_per_s = mbit * 1e6 / 8 if mbit else None

    async def handle(self, c_reader: asyncio.StreamReader, c_writer: asyncio.StreamWriter) -> None:
        """One connection: two directions, each its own link; both sockets closed once
        both directions reached EOF, or at once when either fails."""
        try:
            s_reader, s_writer = await asyncio.open_connection(HOST, self.target)
        except OSError:
            c_writer.close()
            return
        _nodelay(c_writer)
        _nodelay(s_writer)
        up = Link(self.delay_s, self.bytes_per_s)
        down = Link(self.delay_s, self.bytes_per_s)
        tasks = [
            asyncio.create_task(_pipe(c_reader, s_writer, up)),
            asyncio.create_task(_pipe(s_reader, c_writer, down)),
        ]
        try:
            done, pending = await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
            # a clean EOF leaves the other direction open (a half-close); a failure ends both
            if pending and all(t.result() for t in done):
                await asyncio.wait(pending)
        except asyncio.CancelledError:
            pass  # the relay is stopping: asyncio's stream callback would log it as an error
        finally:
            for t in tasks:
                t.cancel()
            for w in (c_writer, s_writer):
                with contextlib.suppress(Exception):
                    w.close()


async def serve(listen: int, relay: Relay, parent: int | None = None) -> None:
    """Serve until cancelled, or until ``parent`` (a PID) is no longer this process's parent."""
    server = await asyncio.start_server(relay.handle, HOST, listen, backlog=128)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    try:
        while not stop.is_set():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), PARENT_CHECK_S)
            if parent is not None and os.getppid() != parent:
                break
    finally:
        # not `async with server`: from Python 3.12 its exit waits for every connection to
        # end; asyncio.run cancels them instead, and each handler closes its two sockets
        server.close()


def main(argv: list[str] | None = None) -> int:
    """The relay process: arguments checked here too (it may be started by hand)."""
    p = argparse.ArgumentParser(prog="python -m perflab.net.relay")
    p.add_argument("--listen", type=int, required=True)
    p.add_argument("--target", type=int, required=True)
    p.add_argument("--rtt-ms", type=float, default=0.0)
    p.add_argument("--mbit", type=float, default=None)
    a = p.parse_args(argv)
    for name, port in (("--listen", a.listen), ("--target", a.target)):
        if not 0 < port < 65536:
            p.error(f"{name} {port} is not a TCP port")
    if not 0 <= a.rtt_ms < float("inf"):
        p.error(f"--rtt-ms {a.rtt_ms} must be a number >= 0")
    if a.mbit is not None and not 0 < a.mbit < float("inf"):
        p.error(f"--mbit {a.mbit} must be a number > 0")
    asyncio.run(serve(a.listen, Relay(a.target, a.rtt_ms, a.mbit), os.getppid()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
