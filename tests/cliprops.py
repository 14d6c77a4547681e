"""What the property tests over the CLI share (issue 43): the real ``perflab`` app driven
in-process, a work directory with a store made before, and the property every answer keeps.

The property: exit 0, 1 or 2; on 2 exactly one line on stderr ("perflab: error: ..."); never
a traceback or exit 3; and on exit 2 the store's rows are as they were.

Nothing starts: a run, a Parsl load, a pip install or a network connection raises
``WouldRun`` (a BaseException, so no ``except Exception`` turns it into an exit code) — the
input got past every check, which is all these tests ask of it. Writing a whole report (tens
of seconds of figures) counts the same.

Examples: each test names its count for the default profile; ``HYPOTHESIS_PROFILE=slow``
multiplies them by ten (nightly).
"""

from __future__ import annotations

import gc
import hashlib
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from click.testing import CliRunner
from hypothesis import HealthCheck, event, settings
from hypothesis.errors import InvalidArgument

SCALE = 10 if os.environ.get("HYPOTHESIS_PROFILE") == "slow" else 1
#: Seconds one example may take before it counts as a hang (an input that makes a verb loop;
#: a valid report takes ~10 s of CPU, more on a loaded machine).
HANG_S = 60.0


def examples(n: int) -> settings:
    """Settings for a property: ``n`` examples (ten times more in the slow profile), no
    deadline flakiness on a loaded 2-core machine (``HANG_S`` catches real hangs)."""
    return settings(
        max_examples=n * SCALE,
        deadline=None,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
    )


class WouldRun(BaseException):
    """The input passed validation and something would now start."""


class Hang(Exception):
    """An example ran past ``HANG_S`` (an Exception: the verb reports it as exit 3, and
    hypothesis then shows the input)."""


@dataclass
class Outcome:
    code: int
    stdout: str
    stderr: str
    would_run: bool
    exception: BaseException | None


def _refuse(*args: Any, **kwargs: Any) -> Any:
    raise WouldRun(repr(args)[:200])


def _popen_guard(real: Any) -> Any:
    def guarded(self: Any, args: Any, *rest: Any, **kw: Any) -> Any:
        argv = [args] if isinstance(args, str | bytes) else list(args)
        # `python -c` look-ups (where a package lives, its version) and platform's `uname`
        # start nothing lasting
        if argv[:2] == [sys.executable, "-c"] or argv[:1] == ["uname"]:
            return real(self, args, *rest, **kw)
        raise WouldRun(f"subprocess {argv[:3]}")

    return guarded


@contextmanager
def nothing_starts() -> Iterator[None]:
    import socket

    from perflab.campaign.runners import parsl as parsl_runner
    from perflab.report import html as report_html
    from perflab.report import interactive
    from perflab.run import launch
    from perflab.run import measure as run_measure

    saved = [
        (subprocess.Popen, "_execute_child", subprocess.Popen._execute_child),  # type: ignore[attr-defined]
        (socket.socket, "connect", socket.socket.connect),
        (launch, "warm", launch.warm),
        # a fork server that an earlier test in this process started forks without Popen
        (run_measure, "Supervisor", run_measure.Supervisor),
        (parsl_runner, "run_parsl", parsl_runner.run_parsl),
        (interactive, "bundle", interactive.bundle),
        (report_html, "write_report", report_html.write_report),
    ]
    subprocess.Popen._execute_child = _popen_guard(saved[0][2])  # type: ignore[attr-defined]
    socket.socket.connect = _refuse  # type: ignore[method-assign]
    launch.warm = lambda: None
    run_measure.Supervisor = _refuse  # type: ignore[assignment,misc]
    parsl_runner.run_parsl = _refuse
    # a report bundles Vega in JavaScript once per home: seconds of CPU that check no input
    interactive.bundle = lambda: ""
    # a whole report is 10-30 s of CPU (figures): one whose source opened counts as accepted
    # (its analysis options are analyze's, drawn there; the report is tests/report's)
    report_html.write_report = _refuse
    try:
        yield
    finally:
        for owner, name, value in saved:
            setattr(owner, name, value)


@contextmanager
def _alarm(seconds: float) -> Iterator[None]:
    def ring(signum: int, frame: Any) -> None:
        raise Hang(f"no answer within {seconds:g} s")

    old = signal.signal(signal.SIGALRM, ring)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


class Workdir:
    """A directory holding the files the strategies name, and a store made before (campaign
    ``c1`` planned, dataset ``d1`` imported). ``fresh()`` puts the pristine store back."""

    def __init__(self) -> None:
        self.path = Path(tempfile.mkdtemp(prefix="perflab-props-"))
        self.home = self.path / ".home"
        self._write_files()
        with self.inside():
            for args in (
                ["campaign", "create", "c1", "--metric", "us_per_task",
                 "--command", "echo 1", "--factors", "a,b",
                 "--design", "full", "--store", "s.db"],
                ["import", "data.csv", "d1", "--store", "s.db"],
            ):  # fmt: skip
                out = invoke(args)
                assert out.code == 0, (args, out.stderr, out.exception)
        con = sqlite3.connect(self.path / "s.db")
        con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        con.close()
        shutil.copy(self.path / "s.db", self.path / "pristine.db")
        self.pristine = digest(self.path / "pristine.db")

    def _write_files(self) -> None:
        p = self.path
        (p / "dir").mkdir()
        (p / "garbage.txt").write_bytes(b"\x00\xff garbage \x1b[31m\n")
        (p / "empty.csv").write_text("")
        rows = ["run_id,timestamp,us_per_task,treatments,a,b"]
        for i, (a, b) in enumerate([(0, 0), (1, 0), (0, 1), (1, 1)] * 3):
            t = ",".join(n for n, on in (("a", a), ("b", b)) if on)
            rows.append(f'r{i},{1700000000 + i},{100 + 10 * a - 5 * b + i % 3},"{t}",{a},{b}')
        (p / "data.csv").write_text("\n".join(rows) + "\n")
        (p / "bad.py").write_text("def (:\n")
        (p / "noconfig.py").write_text("x = 1\n")
        (p / "catalog.toml").write_text('[factor.f1]\nenv = { X = "1" }\n')

    @contextmanager
    def inside(self) -> Iterator[None]:
        """cwd and PERFLAB_HOME in the work directory, for one invocation."""
        old_cwd, old_home = os.getcwd(), os.environ.get("PERFLAB_HOME")
        os.chdir(self.path)
        os.environ["PERFLAB_HOME"] = str(self.home)
        try:
            yield
        finally:
            os.chdir(old_cwd)
            if old_home is None:
                os.environ.pop("PERFLAB_HOME", None)
            else:
                os.environ["PERFLAB_HOME"] = old_home

    def fresh(self) -> Path:
        """The store as made, back in place (an example that exits 0 may have grown it)."""
        db = self.path / "s.db"
        if db.exists() and digest(db) == self.pristine:
            return db
        # the last invocation's connections close when collected: replacing a file SQLite
        # still maps (WAL) makes the next open a "disk I/O error"
        gc.collect()
        for suffix in ("", "-wal", "-shm"):
            (self.path / f"s.db{suffix}").unlink(missing_ok=True)
        shutil.copy(self.path / "pristine.db", db)
        return db


_WORKDIR: Workdir | None = None


def workdir() -> Workdir:
    """One work directory per test session (building the store costs a second)."""
    global _WORKDIR
    if _WORKDIR is None:
        _WORKDIR = Workdir()
    return _WORKDIR


def digest(db: Path) -> str:
    """A hash of every row of the store (not of its bytes: SQLite may rewrite pages)."""
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        return hashlib.sha256("\n".join(con.iterdump()).encode()).hexdigest()
    finally:
        con.close()


def invoke(args: list[str]) -> Outcome:
    """``perflab ARGS`` in this process, as the entry point would run it."""
    from perflab.cli.app import main

    runner = CliRunner()
    try:
        with nothing_starts(), _alarm(HANG_S):
            res = runner.invoke(main, args, prog_name="perflab")
    except WouldRun:  # not an Exception: CliRunner lets it through
        return Outcome(0, "", "", True, None)
    exc = res.exception
    if isinstance(exc, SystemExit):
        exc = None
    return Outcome(res.exit_code, res.stdout, res.stderr, False, exc)


def check(out: Outcome, args: list[str]) -> None:
    """The property every answer keeps (see the module's docstring)."""
    shown = f"perflab {' '.join(map(repr, args))}"
    assert out.exception is None, f"{shown}: {type(out.exception).__name__}: {out.exception}"
    if out.would_run:
        return
    assert out.code in (0, 1, 2), f"{shown}: exit {out.code}: {out.stderr}"
    assert "Traceback" not in out.stderr, f"{shown}: {out.stderr}"
    if out.code == 2:
        lines = out.stderr.strip().splitlines()
        assert len(lines) == 1, f"{shown}: {out.stderr!r}"
        assert lines[0].startswith("perflab: error: "), f"{shown}: {out.stderr!r}"


def run_in(wd: Workdir, args: list[str], store: bool = True) -> Outcome:
    """``args`` in the work directory with the store as made; the property checked, and on
    exit 2 the store's rows unchanged."""
    db = wd.fresh()
    with wd.inside():
        out = invoke(args)
    check(out, args)
    with suppress(InvalidArgument):  # outside a property (a plain test) there is no event
        event("would start" if out.would_run else f"exit {out.code}")
    if out.code == 2 and store:
        assert digest(db) == wd.pristine, f"perflab {args}: exit 2 changed the store"
    return out


def numbers_in(obj: object) -> list[float]:
    """Every float in a JSON-shaped value (dicts, lists, tuples), for the properties that
    check each reported number is finite."""
    if isinstance(obj, dict):
        return [x for v in obj.values() for x in numbers_in(v)]
    if isinstance(obj, list | tuple):
        return [x for v in obj for x in numbers_in(v)]
    return [float(obj)] if isinstance(obj, float) else []
