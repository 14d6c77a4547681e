"""The store: one SQLite file per project directory (WAL), the embedded default.

A campaign's plan is written once; a run is committed only when it has finished (ok, failed
or timeout), in one transaction keyed by (campaign, seq), so a killed driver loses at most the
run in flight and resuming never duplicates one.
"""

from __future__ import annotations

import json
import os
import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from perflab.campaign.definition import CampaignDef
from perflab.campaign.sqlite import SafeConnection, store_error
from perflab.errors import PerflabError
from perflab.files import home_dir, perflab_home
from perflab.run.record import METRICS, RunRecord

SCHEMA_VERSION = 1
SCHEMA = f"""
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS campaigns (
    name TEXT PRIMARY KEY,
    created_at TEXT NOT NULL,
    definition TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS planned (
    campaign TEXT NOT NULL REFERENCES campaigns(name) ON DELETE CASCADE,
    seq INTEGER NOT NULL,
    treatments TEXT NOT NULL,
    replicate INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (campaign, seq)
);
CREATE TABLE IF NOT EXISTS runs (
    run_id TEXT NOT NULL,
    campaign TEXT NOT NULL,
    seq INTEGER,
    status TEXT NOT NULL,
    started_at TEXT NOT NULL,
    treatments TEXT NOT NULL,
    {", ".join(f"{m} REAL" for m in METRICS)},
    record TEXT NOT NULL,
    PRIMARY KEY (campaign, run_id),
    UNIQUE (campaign, seq)
);
CREATE INDEX IF NOT EXISTS runs_campaign ON runs(campaign, status);
CREATE INDEX IF NOT EXISTS runs_started ON runs(campaign, started_at);
CREATE INDEX IF NOT EXISTS runs_best ON runs(campaign, status, us_per_task);
CREATE TABLE IF NOT EXISTS unmeasured (
    campaign TEXT NOT NULL,
    seq INTEGER NOT NULL,
    run_id TEXT NOT NULL,
    ended_at TEXT NOT NULL,
    cause TEXT NOT NULL,
    record TEXT NOT NULL,
    PRIMARY KEY (campaign, run_id)
);
CREATE TABLE IF NOT EXISTS leases (
    campaign TEXT PRIMARY KEY,
    token TEXT NOT NULL,
    host TEXT NOT NULL,
    pid INTEGER NOT NULL,
    pid_started REAL NOT NULL,
    acquired_at TEXT NOT NULL,
    heartbeat REAL NOT NULL
);
"""


RUN_COLUMNS = [
    "run_id",
    "campaign",
    "seq",
    "status",
    "started_at",
    "treatments",
    *METRICS,
    "record",
]
INSERT_RUN = (
    f"INSERT INTO runs ({', '.join(RUN_COLUMNS)}) VALUES ({', '.join('?' * len(RUN_COLUMNS))})"
)


def _row(rec: RunRecord, seq: int | None) -> tuple[Any, ...]:
    if rec.campaign is None:
        raise ValueError("a stored run belongs to a campaign")
    return (
        rec.run_id,
        rec.campaign,
        seq,
        rec.status,
        rec.started_at,
        ",".join(sorted(rec.treatments)),
        *[getattr(rec, m) for m in METRICS],
        rec.to_json(),
    )


def default_store_path() -> Path:
    return perflab_home() / "perflab.db"


class Store:
    """Campaign definitions, planned runs and finished runs.

    Opening never creates anything: a missing file reads as an empty store and is created by
    the first write, so a refused command leaves no file behind. A store on a read-only
    filesystem opens read-only (immutable); its writes are refused with one line.
    """

    def __init__(self, path: str | Path | None = None) -> None:
        self.path = Path(path) if path else default_store_path()
        self.read_only = False
        #: Leases this process holds: campaign -> token (checked when a run is stored).
        self.leases: dict[str, str] = {}
        self._db: sqlite3.Connection | None = None
        if self.path.exists():
            self._db = self._open()

    @property
    def db(self) -> sqlite3.Connection:
        if self._db is None:  # no file yet: an empty schema in memory serves the reads
            self._db = self._connect(":memory:")
            self._schema(self._db)
        return self._db

    def _connect(self, target: str, uri: bool = False) -> sqlite3.Connection:
        try:
            db = sqlite3.connect(
                target, timeout=60, isolation_level=None, uri=uri, factory=SafeConnection
            )
        except sqlite3.DatabaseError as exc:
            raise store_error(self.path, exc) from None
        assert isinstance(db, SafeConnection)
        db.store_path = self.path
        db.row_factory = sqlite3.Row
        return db

    def _open(self) -> sqlite3.Connection:
        if self.path.is_dir():
            raise PerflabError(f"store {self.path} is a directory, not an SQLite file")
        if self.path.exists() and not self._writable():
            return self._open_read_only()
        db = self._connect(str(self.path))
        try:
            db.execute("PRAGMA journal_mode=WAL")
        except PerflabError:
            db.close()
            if self._writable():
                raise
            return self._open_read_only()
        db.execute("PRAGMA synchronous=NORMAL")
        db.execute("PRAGMA foreign_keys=ON")
        self._schema(db)
        return db

    def _writable(self) -> bool:
        return os.access(self.path.parent, os.W_OK) and os.access(self.path, os.W_OK)

    def _open_read_only(self) -> sqlite3.Connection:
        # immutable: SQLite may not create its -wal/-shm beside a file it cannot write.
        db = self._connect(f"{self.path.resolve().as_uri()}?immutable=1", uri=True)
        self.read_only = True
        self._check_version(db)
        return db

    def _schema(self, db: sqlite3.Connection) -> None:
        db.execute("BEGIN IMMEDIATE")
        try:
            # executescript() would commit on its own; one statement at a time stays in tx.
            for statement in filter(str.strip, SCHEMA.split(";")):
                db.execute(statement)
            db.execute(
                "INSERT OR IGNORE INTO meta VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),)
            )
        except BaseException:
            if db.in_transaction:
                db.execute("ROLLBACK")
            raise
        db.execute("COMMIT")
        self._check_version(db)

    def _check_version(self, db: sqlite3.Connection) -> None:
        try:
            row = db.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
        except PerflabError:
            raise PerflabError(
                f"store {self.path}: an SQLite file, but not a perflab store"
            ) from None
        version = int(row[0]) if row else None
        if version != SCHEMA_VERSION:
            raise PerflabError(
                f"store {self.path}: schema version {version}, expected {SCHEMA_VERSION}"
            )

    def close(self) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None

    @contextmanager
    def tx(self) -> Iterator[sqlite3.Connection]:
        """One IMMEDIATE transaction: all of it is stored, or none of it."""
        if self.read_only:
            raise PerflabError(f"store {self.path} is read-only: reads work, writes do not")
        if not self.path.exists():  # the first write creates the file
            self.close()
            try:
                if self.path.parent == perflab_home():
                    home_dir()  # made private, or refused if another user made it
                self.path.parent.mkdir(parents=True, exist_ok=True)
                # the store holds every run's environment: this user's alone
                os.close(os.open(self.path, os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600))
            except OSError as exc:
                raise PerflabError(f"store {self.path}: cannot create ({exc.strerror})") from None
            self._db = self._open()
        db = self.db
        db.execute("BEGIN IMMEDIATE")
        try:
            yield db
        except BaseException:
            if db.in_transaction:  # SQLite may have rolled back already (disk full)
                db.execute("ROLLBACK")
            raise
        try:
            db.execute("COMMIT")
        except PerflabError:
            if db.in_transaction:
                db.execute("ROLLBACK")
            raise

    # --- campaigns --------------------------------------------------------------------

    def create_campaign(self, definition: CampaignDef, plan: list[tuple[list[str], int]]) -> None:
        name = definition.name
        with self.tx() as db:
            self._insert_campaign(db, definition)
            db.executemany(
                "INSERT INTO planned VALUES (?, ?, ?, ?)",
                [(name, seq, json.dumps(t), rep) for seq, (t, rep) in enumerate(plan)],
            )

    def _insert_campaign(self, db: sqlite3.Connection, definition: CampaignDef) -> None:
        name = definition.name
        if db.execute("SELECT 1 FROM campaigns WHERE name=?", (name,)).fetchone():
            raise PerflabError(f"campaign {name!r} already exists in {self.path}")
        body = {k: v for k, v in definition.to_dict().items() if k not in ("name", "created_at")}
        db.execute(
            "INSERT INTO campaigns VALUES (?, ?, ?)",
            (name, definition.created_at, json.dumps(body)),
        )

    def campaign(self, name: str) -> CampaignDef:
        row = self.db.execute("SELECT * FROM campaigns WHERE name=?", (name,)).fetchone()
        if row is None:
            known = ", ".join(self.campaign_names()) or "none"
            raise PerflabError(f"no campaign {name!r} in {self.path} (campaigns: {known})")
        return CampaignDef.from_dict(
            {**json.loads(row["definition"]), "name": row["name"], "created_at": row["created_at"]}
        )

    def campaign_names(self) -> list[str]:
        return [r[0] for r in self.db.execute("SELECT name FROM campaigns ORDER BY created_at")]

    def pending(self, name: str) -> list[tuple[int, list[str]]]:
        """Planned runs with no finished run yet, in plan order."""
        rows = self.db.execute(
            "SELECT p.seq, p.treatments FROM planned p LEFT JOIN runs r "
            "ON r.campaign = p.campaign AND r.seq = p.seq "
            "WHERE p.campaign = ? AND r.run_id IS NULL ORDER BY p.seq",
            (name,),
        )
        return [(r[0], json.loads(r[1])) for r in rows]

    def counts(self, name: str) -> dict[str, int]:
        """Planned runs, stored runs by status, and ``unmeasured``: planned runs whose last
        attempt met an infrastructure failure (disk full, a lost file) — not done, retried."""
        planned = self.db.execute(
            "SELECT COUNT(*) FROM planned WHERE campaign=?", (name,)
        ).fetchone()[0]
        out = {"planned": planned, "ok": 0, "failed": 0, "timeout": 0}
        for status, n in self.db.execute(
            "SELECT status, COUNT(*) FROM runs WHERE campaign=? GROUP BY status", (name,)
        ):
            out[status] = n
        out["done"] = out["ok"] + out["failed"] + out["timeout"]
        out["unmeasured"] = self.db.execute(
            "SELECT COUNT(DISTINCT u.seq) FROM unmeasured u LEFT JOIN runs r "
            "ON r.campaign = u.campaign AND r.seq = u.seq "
            "WHERE u.campaign = ? AND r.run_id IS NULL",
            (name,),
        ).fetchone()[0]
        return out

    # --- runs -------------------------------------------------------------------------

    def add_run(self, record: RunRecord, seq: int | None = None) -> None:
        self.add_runs([(record, seq)])

    def add_runs(self, items: list[tuple[RunRecord, int | None]]) -> None:
        """Store finished runs in one transaction (all or none).

        A run of a campaign this process holds the lease of is stored only while it still
        holds it (a driver that was stopped and taken over must not write)."""
        with self.tx() as db:
            for campaign in {rec.campaign for rec, _ in items} & set(self.leases):
                self.check_lease(db, str(campaign))
            try:
                db.executemany(INSERT_RUN, [_row(rec, seq) for rec, seq in items])
            except sqlite3.IntegrityError as exc:
                raise PerflabError(f"store {self.path}: run already stored ({exc})") from None

    def planned(self, name: str) -> list[tuple[int, list[str]]]:
        """Every planned run of a campaign, in plan order."""
        rows = self.db.execute(
            "SELECT seq, treatments FROM planned WHERE campaign=? ORDER BY seq", (name,)
        )
        return [(r[0], json.loads(r[1])) for r in rows]

    def replicates(self, name: str) -> dict[str, int]:
        """Each planned run's replicate block, by run id."""
        rows = self.db.execute(
            "SELECT r.run_id, p.replicate FROM runs r JOIN planned p "
            "ON p.campaign = r.campaign AND p.seq = r.seq WHERE r.campaign = ?",
            (name,),
        )
        return {r[0]: int(r[1]) for r in rows}

    def records_by_seq(self, name: str) -> list[tuple[int, RunRecord]]:
        """The finished runs of a planned campaign with their plan position."""
        rows = self.db.execute(
            "SELECT seq, record FROM runs WHERE campaign=? AND seq IS NOT NULL ORDER BY seq",
            (name,),
        )
        return [(r[0], RunRecord.from_dict(json.loads(r[1]))) for r in rows]

    def add_unmeasured(self, record: RunRecord, seq: int, cause: str) -> None:
        """Remember an attempt that an infrastructure failure spoiled; its run stays pending."""
        with self.tx() as db:
            if record.campaign in self.leases:
                self.check_lease(db, str(record.campaign))
            db.execute(
                "INSERT INTO unmeasured VALUES (?, ?, ?, ?, ?, ?)",
                (record.campaign, seq, record.run_id, record.ended_at, cause, record.to_json()),
            )

    def unmeasured(self, name: str) -> list[sqlite3.Row]:
        """Every infrastructure failure of a campaign, oldest first."""
        return self.db.execute(
            "SELECT seq, run_id, ended_at, cause FROM unmeasured WHERE campaign=? "
            "ORDER BY ended_at",
            (name,),
        ).fetchall()

    def check_lease(self, db: sqlite3.Connection, campaign: str) -> None:
        """In ``db``'s transaction: refuse a write once another driver took the lease."""
        row = db.execute("SELECT token FROM leases WHERE campaign=?", (campaign,)).fetchone()
        if row is None or row[0] != self.leases[campaign]:
            raise PerflabError(
                f"campaign {campaign!r}: another driver took over this one's lease; "
                "this run was not stored"
            )
        db.execute("UPDATE leases SET heartbeat=? WHERE campaign=?", (time.time(), campaign))

    def records(self, name: str) -> list[RunRecord]:
        rows = self.db.execute(
            "SELECT record FROM runs WHERE campaign=? ORDER BY started_at, seq", (name,)
        )
        return [RunRecord.from_dict(json.loads(r[0])) for r in rows]

    def latest(self, name: str, n: int = 5) -> list[sqlite3.Row]:
        return self.db.execute(
            "SELECT seq, status, treatments, us_per_task, started_at FROM runs WHERE campaign=? "
            "ORDER BY started_at DESC LIMIT ?",
            (name, n),
        ).fetchall()

    def best(self, name: str) -> sqlite3.Row | None:
        row: sqlite3.Row | None = self.db.execute(
            "SELECT treatments, us_per_task FROM runs WHERE campaign=? AND status='ok' "
            "ORDER BY us_per_task LIMIT 1",
            (name,),
        ).fetchone()
        return row

    def import_campaign(self, definition: CampaignDef, records: list[RunRecord]) -> None:
        """A campaign made elsewhere: its definition and runs in one transaction."""
        with self.tx() as db:
            self._insert_campaign(db, definition)
            try:
                db.executemany(INSERT_RUN, [_row(r, None) for r in records])
            except sqlite3.IntegrityError as exc:
                raise PerflabError(f"store {self.path}: {exc}") from None
