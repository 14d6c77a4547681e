"""The atlas's SQLite store, ``DIR/atlas.sqlite``: the points (first-parent commits and
releases, in order), every run, every failure, every gate comparison and every step with its
state. Each result is written in its own transaction, so a SIGKILL loses at most the run in
progress; the next update resumes from what is stored."""

from __future__ import annotations

import json
import os
import sqlite3
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from perflab.errors import PerflabError

NAME = "atlas.sqlite"
#: A step's states: suspected → confirmed → bisecting → named → acknowledged / fixed;
#: ``rejected`` (the gate on fresh runs found no step) and ``undecided`` (the bisection
#: could not name a commit) are where a step may also end.
STATES = ("suspected", "confirmed", "bisecting", "named", "acknowledged", "fixed", "rejected",
          "undecided")  # fmt: skip
OPEN = ("suspected", "confirmed", "bisecting", "named")
SCHEMA = """
CREATE TABLE IF NOT EXISTS points(key TEXT PRIMARY KEY, ord INTEGER NOT NULL, label TEXT,
  subject TEXT, pr INTEGER, release TEXT, on_axis INTEGER NOT NULL DEFAULT 1);
CREATE TABLE IF NOT EXISTS runs(id INTEGER PRIMARY KEY, bench TEXT NOT NULL,
  point TEXT NOT NULL, value REAL NOT NULL, at TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS failures(bench TEXT NOT NULL, point TEXT NOT NULL,
  kind TEXT NOT NULL, reason TEXT NOT NULL, at TEXT NOT NULL, PRIMARY KEY(bench, point));
CREATE TABLE IF NOT EXISTS comparisons(key TEXT PRIMARY KEY, bench TEXT NOT NULL,
  data TEXT NOT NULL, at TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS steps(id INTEGER PRIMARY KEY, bench TEXT NOT NULL,
  a TEXT NOT NULL, b TEXT NOT NULL, direction TEXT NOT NULL, state TEXT NOT NULL,
  data TEXT NOT NULL, note TEXT, link INTEGER, created TEXT NOT NULL, updated TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS updates(id INTEGER PRIMARY KEY, started TEXT NOT NULL,
  ended TEXT, data TEXT);
"""


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


@dataclass
class StepRow:
    id: int
    bench: str
    a: str
    b: str
    direction: str
    state: str
    data: dict[str, Any]
    note: str | None
    link: int | None
    created: str
    updated: str

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "benchmark": self.bench, "a": self.a, "b": self.b,
                "direction": self.direction, "state": self.state, "note": self.note,
                "link": self.link, "created": self.created, "updated": self.updated,
                **self.data}  # fmt: skip


class Store:
    """The store of one atlas directory (which the caller has made private and checked)."""

    def __init__(self, dir_: Path, create: bool = False) -> None:
        self.path = Path(dir_) / NAME
        if not create and not self.path.is_file():
            raise PerflabError(f"{dir_}: no atlas store ({NAME}; make one with atlas init)")
        if not os.access(dir_, os.W_OK) or (
            self.path.exists() and not os.access(self.path, os.W_OK)
        ):
            raise PerflabError(f"{self.path}: the store cannot be written (permission denied)")
        try:
            self.db = sqlite3.connect(self.path, timeout=30, isolation_level=None)
            self.db.executescript(SCHEMA)
        except sqlite3.Error as exc:
            raise PerflabError(f"{self.path}: cannot open the store: {exc}") from None

    def close(self) -> None:
        self.db.close()

    def _tx(self, sql: str, args: tuple[Any, ...] = ()) -> sqlite3.Cursor:
        """One statement in its own transaction (committed before it returns)."""
        with self.db:
            self.db.execute("BEGIN IMMEDIATE")
            return self.db.execute(sql, args)

    # points
    def points(self, axis_only: bool = False) -> list[dict[str, Any]]:
        where = " WHERE on_axis = 1" if axis_only else ""
        cur = self.db.execute(
            f"SELECT key, ord, label, subject, pr, release, on_axis FROM points{where} ORDER BY ord"
        )
        names = ("key", "ord", "label", "subject", "pr", "release", "on_axis")
        return [dict(zip(names, row, strict=True)) for row in cur]

    def add_points(self, rows: list[dict[str, Any]]) -> int:
        """Points not yet stored, appended after the last (one transaction); how many."""
        known = {p["key"]: p for p in self.points()}
        new = [r for r in rows if r["key"] not in known]
        start = max((p["ord"] for p in known.values()), default=-1) + 1
        with self.db:
            self.db.execute("BEGIN IMMEDIATE")
            for i, r in enumerate(new):
                self.db.execute(
                    "INSERT INTO points VALUES (?, ?, ?, ?, ?, ?, ?)",
                    (r["key"], start + i, r["label"], r["subject"], r.get("pr"),
                     r.get("release"), int(r.get("on_axis", True))),
                )  # fmt: skip
            for r in rows:  # a release tagged since, or a point now on the axis
                if r["key"] in known and (r.get("release"), int(r.get("on_axis", True))) != (
                    known[r["key"]]["release"],
                    known[r["key"]]["on_axis"],
                ):
                    self.db.execute(
                        "UPDATE points SET release = ?, on_axis = ? WHERE key = ?",
                        (r.get("release"), int(r.get("on_axis", True)), r["key"]),
                    )
        return len(new)

    # runs and failures
    def add_run(self, bench: str, point: str, value: float) -> None:
        self._tx("INSERT INTO runs(bench, point, value, at) VALUES (?, ?, ?, ?)",
                 (bench, point, value, now()))  # fmt: skip

    def runs(self, bench: str) -> dict[str, list[float]]:
        out: dict[str, list[float]] = {}
        for point, value in self.db.execute(
            "SELECT point, value FROM runs WHERE bench = ? ORDER BY id", (bench,)
        ):
            out.setdefault(point, []).append(value)
        return out

    def run_count(self) -> int:
        return int(self.db.execute("SELECT count(*) FROM runs").fetchone()[0])

    def fail(self, bench: str, point: str, kind: str, reason: str) -> None:
        self._tx("INSERT OR REPLACE INTO failures VALUES (?, ?, ?, ?, ?)",
                 (bench, point, kind, reason, now()))  # fmt: skip

    def failures(self, bench: str) -> dict[str, tuple[str, str]]:
        cur = self.db.execute("SELECT point, kind, reason FROM failures WHERE bench = ?", (bench,))
        return {p: (k, r) for p, k, r in cur}

    # gate comparisons (confirmations and the bisection's)
    def comparison(self, key: str) -> dict[str, Any] | None:
        row = self.db.execute("SELECT data FROM comparisons WHERE key = ?", (key,)).fetchone()
        return json.loads(row[0]) if row else None

    def keep_comparison(self, key: str, bench: str, data: dict[str, Any]) -> None:
        self._tx("INSERT OR REPLACE INTO comparisons VALUES (?, ?, ?, ?)",
                 (key, bench, json.dumps(data), now()))  # fmt: skip

    def comparisons(self, bench: str) -> int:
        sql = "SELECT count(*) FROM comparisons WHERE bench = ?"
        return int(self.db.execute(sql, (bench,)).fetchone()[0])

    # steps
    def steps(self, bench: str | None = None) -> list[StepRow]:
        sql = "SELECT * FROM steps" + (" WHERE bench = ?" if bench else "") + " ORDER BY id"
        rows = self.db.execute(sql, (bench,) if bench else ())
        return [StepRow(r[0], r[1], r[2], r[3], r[4], r[5], json.loads(r[6]), r[7], r[8], r[9],
                        r[10]) for r in rows]  # fmt: skip

    def step(self, step_id: int) -> StepRow | None:
        return next((s for s in self.steps() if s.id == step_id), None)

    def add_step(self, bench: str, a: str, b: str, direction: str, data: dict[str, Any]) -> int:
        t = now()
        cur = self._tx("INSERT INTO steps(bench, a, b, direction, state, data, created, updated)"
                       " VALUES (?, ?, ?, ?, 'suspected', ?, ?, ?)",
                       (bench, a, b, direction, json.dumps(data), t, t))  # fmt: skip
        return int(cur.lastrowid or 0)

    def set_step(self, step_id: int, state: str | None = None, data: dict[str, Any] | None = None,
                 note: str | None = None, link: int | None = None) -> None:  # fmt: skip
        """Move a step on (its state, more data, a note, a linked step) in one transaction."""
        assert state is None or state in STATES
        with self.db:
            self.db.execute("BEGIN IMMEDIATE")
            row = self.db.execute("SELECT data FROM steps WHERE id = ?", (step_id,)).fetchone()
            merged = {**json.loads(row[0]), **(data or {})}
            self.db.execute(
                "UPDATE steps SET state = coalesce(?, state), data = ?, note = coalesce(?, note),"
                " link = coalesce(?, link), updated = ? WHERE id = ?",
                (state, json.dumps(merged), note, link, now(), step_id),
            )

    # updates
    def begin_update(self) -> int:
        cur = self._tx("INSERT INTO updates(started) VALUES (?)", (now(),))
        return int(cur.lastrowid or 0)

    def end_update(self, update_id: int, data: dict[str, Any]) -> None:
        self._tx("UPDATE updates SET ended = ?, data = ? WHERE id = ?",
                 (now(), json.dumps(data), update_id))  # fmt: skip

    def updates(self) -> list[dict[str, Any]]:
        cur = self.db.execute("SELECT id, started, ended, data FROM updates ORDER BY id")
        return [{"id": i, "started": s, "ended": e, **(json.loads(d) if d else {})}
                for i, s, e, d in cur]  # fmt: skip
