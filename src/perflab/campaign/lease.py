"""One driver per campaign: a lease held in the store itself.

A lease row names its holder (host, pid and the pid's start time, so a reused pid is not
mistaken for the holder). A second ``campaign run`` of the same campaign is refused naming the
holder; different campaigns of one store run side by side. A lease whose holder is dead is
taken over: on this host, the holder's process is gone; on another host (a store on a shared
filesystem), nothing was stored for longer than a run may last.
"""

from __future__ import annotations

import os
import socket
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import psutil

from perflab.campaign.store import Store
from perflab.errors import PerflabError

#: Seconds of silence after which another host's lease counts as stale, beyond one run's
#: timeout (a live driver stores something at least once per run).
REMOTE_SLACK_S = 120.0


@dataclass(frozen=True)
class Holder:
    host: str
    pid: int
    pid_started: float
    acquired_at: str
    heartbeat: float

    def alive(self, stale_after_s: float) -> bool:
        if self.host != socket.gethostname():
            return time.time() - self.heartbeat < stale_after_s
        try:
            return abs(psutil.Process(self.pid).create_time() - self.pid_started) < 0.01
        except psutil.Error:
            return False

    def __str__(self) -> str:
        return f"pid {self.pid} on host {self.host} (since {self.acquired_at})"


def _me() -> tuple[str, int, float]:
    return socket.gethostname(), os.getpid(), psutil.Process().create_time()


def _refuse_live(store: Store, campaign: str, row: Any, run_timeout_s: float) -> Holder:
    """The lease's holder, once it is known to be gone (a PerflabError naming it if not)."""
    holder = Holder(
        row["host"], row["pid"], row["pid_started"], row["acquired_at"], row["heartbeat"]
    )
    host, pid, _ = _me()
    if (holder.host, holder.pid) == (host, pid):
        raise PerflabError(f"campaign {campaign!r} is already being run by this process")
    if holder.alive(run_timeout_s + REMOTE_SLACK_S):
        raise PerflabError(
            f"campaign {campaign!r} is being run by {holder} (store {store.path}); "
            "wait for it, or stop that process and run again"
        )
    return holder


def check_free(store: Store, campaign: str, run_timeout_s: float = 300.0) -> None:
    """Refuse (PerflabError naming the holder) while another live process runs ``campaign``,
    without taking the lease: a CLI checks this before it shows progress, so the refusal is
    its one line. ``acquire`` still decides any race."""
    with store.tx() as db:
        row = db.execute("SELECT * FROM leases WHERE campaign=?", (campaign,)).fetchone()
    if row is not None:
        _refuse_live(store, campaign, row, run_timeout_s)


def acquire(store: Store, campaign: str, run_timeout_s: float = 300.0) -> str | None:
    """Take the campaign's lease (PerflabError naming the holder if it is alive elsewhere).

    Returns a note when a stale lease was taken over, else None.
    """
    host, pid, started = _me()
    note = None
    with store.tx() as db:
        row = db.execute("SELECT * FROM leases WHERE campaign=?", (campaign,)).fetchone()
        if row is not None:
            holder = _refuse_live(store, campaign, row, run_timeout_s)
            note = f"took over the lease of campaign {campaign!r} from {holder}, which is gone"
        token = uuid.uuid4().hex
        db.execute(
            "INSERT OR REPLACE INTO leases VALUES (?, ?, ?, ?, ?, ?, ?)",
            (
                campaign,
                token,
                host,
                pid,
                started,
                datetime.now(UTC).isoformat(timespec="seconds"),
                time.time(),
            ),
        )
    store.leases[campaign] = token
    return note


def release(store: Store, campaign: str) -> None:
    """Give the lease back (only if this process still holds it)."""
    token = store.leases.pop(campaign, None)
    if token is None:
        return
    with store.tx() as db:
        db.execute("DELETE FROM leases WHERE campaign=? AND token=?", (campaign, token))


@contextmanager
def held(store: Store, campaign: str, run_timeout_s: float = 300.0) -> Iterator[str | None]:
    """The lease for the duration of a ``with`` block; yields the takeover note, if any."""
    note = acquire(store, campaign, run_timeout_s)
    try:
        yield note
    finally:
        try:
            release(store, campaign)
        except PerflabError:
            pass  # e.g. the disk is full: the lease is stale once this process exits
