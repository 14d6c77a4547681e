"""Reliability through the real CLI: every bad input a clear error, every failure recorded
truthfully, one driver per campaign; a full disk, two drivers and an internal error. Only
black-box commands run here."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import ROOT, perflab

ERR = "perflab: error:"


@pytest.fixture
def work(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PERFLAB_HOME", str(tmp_path / ".perflab"))
    return tmp_path


def one_line(proc: subprocess.CompletedProcess, code: int = 2) -> str:
    """The single stderr line of a refused command (exit ``code``, no traceback)."""
    assert proc.returncode == code, (proc.returncode, proc.stdout, proc.stderr)
    lines = proc.stderr.strip().splitlines()
    assert "Traceback" not in proc.stderr, proc.stderr
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith(ERR), lines[0]
    return lines[0]


def runs(db: Path, name: str) -> list[dict]:
    con = sqlite3.connect(db)
    try:
        rows = con.execute("SELECT record FROM runs WHERE campaign=? ORDER BY seq", (name,))
        return [json.loads(r[0]) for r in rows]
    finally:
        con.close()


def create(work: Path, name: str, command: str, *extra: str) -> None:
    proc = perflab(
        "campaign",
        "create",
        name,
        "--metric",
        "us_per_task",
        "--command",
        command,
        "--store",
        str(work / "s.db"),
        *extra,
        cwd=work,
    )
    assert proc.returncode == 0, proc.stderr


def run_c(work: Path, name: str, *extra: str, db: Path | None = None):
    return perflab("campaign", "run", name, "--store", str(db or work / "s.db"), *extra, cwd=work)


# --- a full disk, a missing file, a crashed supervisor ------------------------------


@pytest.fixture
def small_fs(tmp_path: Path) -> Iterator[Path]:
    """A 2 MiB tmpfs (needs root, as on the project's machines and CI)."""
    mnt = tmp_path / "small"
    mnt.mkdir()
    proc = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(mnt)], capture_output=True
    )
    if proc.returncode != 0:
        pytest.skip(f"mounting a tmpfs is not allowed here: {proc.stderr.decode().strip()}")
    try:
        yield mnt
    finally:
        subprocess.run(["umount", "-l", str(mnt)], check=False)


#: The first run fills the disk (as a verbose log would); later runs do not.
FILL = (
    'if [ ! -e filled ]; then touch filled; head -c 8M /dev/zero >"$PERFLAB_RUN_DIR/fill"; fi; '
    "echo 100"
)


def test_full_run_root_is_failed_unmeasured_and_resumed(work: Path, small_fs: Path) -> None:
    create(
        work,
        "full",
        FILL,
        "--factors",
        "a",
        "--design",
        "full",
        "--runs",
        "2",
        "--run-root",
        str(small_fs),
    )
    proc = run_c(work, "full", "--json")
    assert proc.returncode == 1, proc.stderr
    assert "Traceback" not in proc.stderr
    assert "No space left on device" in proc.stderr
    status = json.loads(
        perflab("campaign", "status", "full", "--store", "s.db", "--json", cwd=work).stdout
    )
    c = status["counts"]
    assert c["timeout"] == 0 and c["unmeasured"] >= 1 and c["ok"] == 0
    assert c["done"] == 0, "an unmeasured run is not done"
    assert runs(work / "s.db", "full") == [], "nothing unmeasured is stored as a run"
    for p in small_fs.rglob("fill"):  # free the space, then resume
        p.unlink()
    proc = run_c(work, "full", "--json")
    assert proc.returncode == 0, proc.stderr
    stored = runs(work / "s.db", "full")
    assert [r["status"] for r in stored] == ["ok"] * 4


def test_missing_file_is_failed_with_cause_and_retried(work: Path) -> None:
    # The first run deletes its own run directory: the supervisor cannot write its result.
    cmd = 'if [ ! -e once ]; then touch once; rm -rf "$PERFLAB_RUN_DIR"; fi; echo 100'
    create(work, "mf", cmd, "--factors", "a", "--design", "full")
    proc = run_c(work, "mf", "--json")
    assert proc.returncode == 1, proc.stderr
    assert "Traceback" not in proc.stderr
    assert "No such file or directory" in proc.stderr
    assert runs(work / "s.db", "mf") == [], "not measured, so not stored as a run"
    proc = run_c(work, "mf", "--json")
    assert proc.returncode == 0, proc.stderr
    stored = runs(work / "s.db", "mf")
    assert [r["status"] for r in stored] == ["ok", "ok"]
    assert len({r["run_id"] for r in stored}) == 2


def test_store_on_a_full_disk_stops_cleanly(work: Path, small_fs: Path) -> None:
    db = small_fs / "s.db"
    proc = perflab(
        "campaign",
        "create",
        "sf",
        "--metric",
        "us_per_task",
        "--command",
        "echo 100",
        "--factors",
        "a,b",
        "--design",
        "full",
        "--runs",
        "3",
        "--store",
        str(db),
        cwd=work,
    )
    assert proc.returncode == 0, proc.stderr
    filler = small_fs / "filler"
    subprocess.run(["dd", "if=/dev/zero", f"of={filler}", "bs=4k"], capture_output=True)
    proc = run_c(work, "sf", "--json", db=db)
    line = one_line(proc, 1)
    assert "full" in line and str(db) in line
    filler.unlink()
    proc = run_c(work, "sf", "--json", db=db)
    assert proc.returncode == 0, proc.stderr
    stored = runs(db, "sf")
    assert sorted(r["status"] for r in stored) == ["ok"] * 12
    con = sqlite3.connect(db)
    assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    seqs = [s for (s,) in con.execute("SELECT seq FROM runs WHERE campaign='sf'")]
    assert sorted(seqs) == list(range(12))


# --- the campaign keeps its catalog's content ----------------------------------------


def test_edited_catalog_does_not_change_a_campaign(work: Path) -> None:
    cat = work / "c.toml"
    cat.write_text('[factor.slow]\ncategory = "environment"\nenv = {DELAY = "1500"}\n')
    create(
        work,
        "c2",
        "echo ${DELAY:-100}",
        "--catalog",
        str(cat),
        "--factors",
        "slow",
        "--design",
        "full",
        "--runs",
        "2",
        "--seed",
        "1",
    )
    assert run_c(work, "c2", "--max-runs", "1", "--json").returncode == 0
    cat.write_text('[factor.slow]\ncategory = "environment"\nenv = {DELAY = "500"}\n')
    proc = run_c(work, "c2", "--json")
    assert proc.returncode == 0, proc.stderr
    assert "changed" in proc.stderr and str(cat) in proc.stderr
    slow = [r["us_per_task"] for r in runs(work / "s.db", "c2") if r["treatments"] == ["slow"]]
    assert slow == [1500.0, 1500.0]
    cat.unlink()  # even without the file, the stored content is used
    assert perflab("campaign", "status", "c2", "--store", "s.db", cwd=work).returncode == 0


def test_catalog_may_not_silently_shadow_a_builtin_factor(work: Path) -> None:
    cat = work / "shadow.toml"
    cat.write_text('[factor.cfg_poll_100]\nenv = {X = "1"}\n')
    line = one_line(perflab("factors", "show", "cfg_poll_100", "--catalog", str(cat)))
    assert "cfg_poll_100" in line and "built-in" in line and "override" in line
    cat.write_text('[factor.cfg_poll_100]\noverride = true\nenv = {X = "1"}\n')
    proc = perflab("factors", "show", "cfg_poll_100", "--catalog", str(cat))
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["effects"] == {"env": {"X": "1"}}


# --- exit codes of campaign run --------------------------------------------------------


def test_campaign_run_exits_1_when_runs_failed(work: Path) -> None:
    create(work, "c3", "exit 3", "--factors", "a,b", "--design", "full")
    proc = run_c(work, "c3", "--json")
    assert proc.returncode == 1, proc.stderr
    assert json.loads(proc.stdout)["failed"] == 4


# --- impossible scores ---------------------------------------------------------------


@pytest.mark.parametrize("score", ["-5", "0", '{"us_per_task": -1}'])
def test_impossible_score_is_refused(work: Path, score: str) -> None:
    line = one_line(
        perflab(
            "run",
            "--metric",
            "us_per_task",
            "--command",
            f"echo '{score}'",
            "--run-root",
            "r",
            "--json",
        )
    )
    assert "us_per_task" in line and "> 0" in line


def test_campaign_stores_an_impossible_score_as_failed(work: Path) -> None:
    create(work, "c4", "echo -5", "--factors", "a", "--design", "full")
    assert run_c(work, "c4", "--json").returncode == 1
    assert {r["status"] for r in runs(work / "s.db", "c4")} == {"failed"}


def test_import_refuses_negative_time(work: Path) -> None:
    (work / "neg.csv").write_text("run_id;timestamp;us_per_task;a\nx;0;5;1\ny;1;-42;0\n")
    line = one_line(perflab("import", "neg.csv", "n", "--store", "s.db"))
    assert "neg.csv:3" in line and "us_per_task" in line
    assert (
        not (work / "s.db").exists()
        or "n" not in perflab("campaign", "list", "--store", "s.db", "--json").stdout
    )


# --- tracebacks instead of exit 2 ------------------------------------------------------


@pytest.fixture(scope="module")
def ok_campaign(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small finished campaign, shared by the tests that only read it."""
    work = tmp_path_factory.mktemp("ok")
    create(
        work,
        "ok1",
        "echo $((100 + RANDOM % 10))",
        "--factors",
        "a,b",
        "--design",
        "full",
        "--runs",
        "2",
    )
    assert run_c(work, "ok1", "--json").returncode == 0
    return work


def _write(work: Path, name: str, data: bytes) -> str:
    (work / name).write_bytes(data)
    return name


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["--design", "random", "--design-opt", "runs=abc"], "runs"),
        (["--design", "fractional", "--design-opt", "resolution=abc"], "resolution"),
    ],
)
def test_design_options_typed(work: Path, args: list[str], fragment: str) -> None:
    proc = perflab(
        "campaign",
        "create",
        "x",
        "--metric",
        "us_per_task",
        "--command",
        "echo 5",
        "--factors",
        "a,b",
        "--store",
        "s.db",
        *args,
    )
    assert fragment in one_line(proc)


def test_wrapper_value_typed(work: Path) -> None:
    (work / "bad.toml").write_text('[factor.nic]\nwrapper = {nice = "abc"}\n')
    line = one_line(
        perflab(
            "run",
            "--metric",
            "us_per_task",
            "--command",
            "echo 5",
            "--catalog",
            "bad.toml",
            "--treat",
            "nic",
            "--run-root",
            "r",
        )
    )
    assert "bad.toml" in line and "nice" in line


@pytest.mark.parametrize(
    "data", [b"run_id;timestamp;us_per_task;a\n1;0;5\xff;1\n", bytes(range(256)) * 3]
)
def test_csv_not_text(work: Path, data: bytes) -> None:
    _write(work, "b.csv", data)
    assert "b.csv" in one_line(perflab("import", "b.csv", "i", "--store", "s.db"))


@pytest.mark.parametrize(
    "args", [["--order", "nope,a"], ["--from", "nope"], ["--to", "nope"], ["--without", "nope"]]
)
def test_analyze_unknown_factor(ok_campaign: Path, args: list[str]) -> None:
    line = one_line(perflab("analyze", "ok1", "--store", "s.db", *args, cwd=ok_campaign))
    assert "nope" in line


def test_export_to_missing_dir(ok_campaign: Path) -> None:
    line = one_line(
        perflab("export", "ok1", "-o", "/missing/dir/x.csv", "--store", "s.db", cwd=ok_campaign)
    )
    assert "/missing/dir/x.csv" in line


def test_long_campaign_name(work: Path) -> None:
    proc = perflab(
        "campaign",
        "create",
        "x" * 300,
        "--metric",
        "us_per_task",
        "--command",
        "echo 5",
        "--factors",
        "a",
        "--store",
        "s.db",
    )
    assert "campaign name" in one_line(proc)
    line = one_line(perflab("import", "whatever.csv", "y" * 300, "--store", "s.db"))
    assert "campaign name" in line


@pytest.mark.parametrize("kind", ["text", "truncated"])
def test_store_not_sqlite(ok_campaign: Path, kind: str) -> None:
    bad = ok_campaign / "bad.db"
    if kind == "text":
        bad.write_text("not a database at all\n" * 50)
    else:
        bad.write_bytes((ok_campaign / "s.db").read_bytes()[:5000] + b"\0" * 7000)
    before = bad.read_bytes()
    for verb in (["campaign", "list"], ["campaign", "status", "ok1"], ["analyze", "ok1"]):
        line = one_line(perflab(*verb, "--store", str(bad)))
        assert str(bad) in line
    assert bad.read_bytes() == before, "the bad store is left untouched"


def test_store_on_read_only_fs(ok_campaign: Path, tmp_path: Path) -> None:
    ro = tmp_path / "ro"
    ro.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "tmpfs", str(ro)], capture_output=True).returncode:
        pytest.skip("mounting a tmpfs is not allowed here")
    try:
        con = sqlite3.connect(ok_campaign / "s.db")
        con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        con.close()
        (ro / "s.db").write_bytes((ok_campaign / "s.db").read_bytes())
        subprocess.run(["mount", "-o", "remount,ro", str(ro)], check=True)
        db = str(ro / "s.db")
        # Reads work ...
        proc = perflab("campaign", "status", "ok1", "--store", db, "--json")
        assert proc.returncode == 0, proc.stderr
        assert json.loads(proc.stdout)["counts"]["ok"] == 8
        assert perflab("analyze", "ok1", "--store", db, "--json").returncode == 0
        # ... writes say why they cannot.
        proc = perflab(
            "campaign",
            "create",
            "z",
            "--metric",
            "us_per_task",
            "--command",
            "echo 5",
            "--factors",
            "a",
            "--store",
            db,
        )
        assert "read-only" in one_line(proc)
    finally:
        subprocess.run(["umount", "-l", str(ro)], check=False)


# --- checked before anything starts ---------------------------------------------------


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["-t", "cf-threads", "--workers", "0"], "workers"),
        (["-t", "parsl-htex", "--opt", "prefetch_capacity=abc"], "prefetch_capacity"),
        (["-t", "parsl-htex", "--opt", "poll_period=-3"], "poll_period"),
        (["-t", "dask", "--opt", "threads_per_worker=0"], "threads_per_worker"),
    ],
)
def test_engine_options_checked_before_start(work: Path, args: list[str], fragment: str) -> None:
    line = one_line(perflab("run", *args, "-n", "5", "--run-root", "r"))
    assert fragment in line
    assert not (work / "r").exists(), "nothing was started"
    proc = perflab(
        "campaign",
        "create",
        "w",
        *args,
        "-n",
        "5",
        "--factors",
        "cfg_noop_logging",
        "--store",
        "s.db",
    )
    assert fragment in one_line(proc)


# --- messages that name the real problem ----------------------------------------------


def test_messages(work: Path) -> None:
    line = one_line(
        perflab(
            "campaign",
            "create",
            "c",
            "--target",
            "nope",
            "--factors",
            "cfg_poll_100",
            "--store",
            "s.db",
        )
    )
    assert "unknown engine 'nope'" in line
    line = one_line(
        perflab(
            "campaign",
            "create",
            "c",
            "--metric",
            "us_per_task",
            "--command",
            "echo 5",
            "--factors",
            "a,b",
            "--design-opt",
            "runs=-1",
            "--store",
            "s.db",
        )
    )
    assert "runs" in line and "-1" in line
    (work / "nohdr.csv").write_text("1;0;1\n2;1;0\n")
    line = one_line(perflab("import", "nohdr.csv", "c", "--store", "s.db"))
    assert "header" in line
    for budget in ("0m", "0", "-5"):
        line = one_line(
            perflab(
                "campaign",
                "create",
                "c",
                "--metric",
                "us_per_task",
                "--command",
                "echo 5",
                "--factors",
                "a",
                "--budget",
                budget,
                "--store",
                "s.db",
            )
        )
        assert "--budget" in line


# --- one driver per campaign ---------------------------------------------------------


def _driver(work: Path, name: str) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    return subprocess.Popen(
        [sys.executable, "-m", "perflab", "campaign", "run", name, "--store", "s.db", "--json"],
        cwd=work,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_two_drivers_one_campaign(work: Path) -> None:
    create(
        work,
        "c8",
        "sleep 0.5; echo $((100 + RANDOM % 5))",
        "--factors",
        "a,b",
        "--design",
        "full",
        "--runs",
        "2",
    )
    first, second = _driver(work, "c8"), _driver(work, "c8")
    outs = [p.communicate(timeout=120) for p in (first, second)]
    codes = sorted(p.returncode for p in (first, second))
    assert codes == [0, 2], outs
    loser = [o for p, o in zip((first, second), outs, strict=True) if p.returncode == 2][0]
    line = loser[1].strip().splitlines()
    assert len(line) == 1 and "pid" in line[0] and os.uname().nodename in line[0], loser
    winner = first if first.returncode == 0 else second
    assert f"pid {winner.pid}" in line[0]
    stored = runs(work / "s.db", "c8")
    assert len(stored) == 8 and len({r["run_id"] for r in stored}) == 8
    assert {r["measurement"]["measured_by"]["pid"] for r in stored} == {winner.pid}


def test_different_campaigns_run_side_by_side(work: Path) -> None:
    for n in ("p", "q"):
        create(work, n, "sleep 0.3; echo 100", "--factors", "a", "--design", "full")
    drivers = [_driver(work, "p"), _driver(work, "q")]
    for d in drivers:
        d.communicate(timeout=120)
    assert [d.returncode for d in drivers] == [0, 0]


def test_stale_lock_of_a_killed_driver_is_taken_over(work: Path) -> None:
    create(work, "st", "sleep 0.5; echo 100", "--factors", "a,b", "--design", "full")
    d = _driver(work, "st")
    deadline = time.monotonic() + 60
    while not runs(work / "s.db", "st") and time.monotonic() < deadline:
        time.sleep(0.1)
    d.kill()
    d.wait()
    proc = run_c(work, "st", "--json")
    assert proc.returncode == 0, proc.stderr
    assert f"pid {d.pid}" in proc.stderr and "took over" in proc.stderr
    stored = runs(work / "s.db", "st")
    assert sorted(r["run_id"] for r in stored) == sorted({r["run_id"] for r in stored})
    assert len(stored) == 4


# --- a refused create leaves nothing behind -------------------------------------------


def test_refused_create_leaves_no_store(work: Path) -> None:
    proc = perflab(
        "campaign",
        "create",
        "c9",
        "--metric",
        "us_per_task",
        "--command",
        "echo 5",
        "--factors",
        "a",
        "--design",
        "nope",
        cwd=work,
    )
    one_line(proc)
    assert not (work / ".perflab").exists()
    one_line(perflab("campaign", "status", "c9", cwd=work))
    assert not (work / ".perflab").exists(), "reading a missing store does not create it"


# --- black-box targets name their own factors ----------------------------------------


def test_builtin_name_is_a_label_for_a_command_only_when_declared(work: Path) -> None:
    cmd = '[ "$PERFLAB_TREATMENTS" = affinity ] && echo 7'
    # a built-in factor that cannot reach a program is refused, not silently a label
    proc = perflab(
        "run",
        "--metric",
        "us_per_task",
        "--command",
        cmd,
        "--treat",
        "affinity",
        "--run-root",
        "r",
        "--json",
    )
    assert proc.returncode == 2 and "give it as label:affinity" in proc.stderr, proc.stderr
    proc = perflab(
        "run", "--metric", "us_per_task", "--command", cmd, "--treat", "label:affinity",
        "--run-root", "r", "--json",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["treatments"] == ["affinity"]


def test_catalog_label_factors(work: Path) -> None:
    (work / "lab.toml").write_text(
        '[factor.algo]\nlabel = true\ncategory = "source_keep"\nlevels = ["fast", "slow"]\n'
        '[factor.cache]\nlabel = true\nconflicts = ["algo"]\n'
    )
    cmd = 'case ",$PERFLAB_TREATMENTS," in *,algo=fast,*) echo 50;; *) echo 100;; esac'
    proc = perflab(
        "run",
        "--metric",
        "us_per_task",
        "--command",
        cmd,
        "--catalog",
        "lab.toml",
        "--treat",
        "algo=fast",
        "--run-root",
        "r",
        "--json",
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["us_per_task"] == 50
    line = one_line(
        perflab(
            "run",
            "--metric",
            "us_per_task",
            "--command",
            cmd,
            "--catalog",
            "lab.toml",
            "--treat",
            "algo=fast,cache",
            "--run-root",
            "r",
        )
    )
    assert "conflict" in line
    line = one_line(
        perflab(
            "run",
            "--metric",
            "us_per_task",
            "--command",
            cmd,
            "--catalog",
            "lab.toml",
            "--treat",
            "algo=medium",
            "--run-root",
            "r",
        )
    )
    assert "medium" in line
    (work / "nolabel.toml").write_text('[factor.z]\ncategory = "environment"\n')
    line = one_line(perflab("factors", "list", "--catalog", "nolabel.toml"))
    assert "label = true" in line


# --- unexpected errors: one line and the traceback's file --------------------------------------


def test_internal_error_is_one_line_and_a_traceback_file(work: Path) -> None:
    create(work, "broken", "echo 5", "--factors", "a", "--design", "full")
    con = sqlite3.connect(work / "s.db")
    con.execute("UPDATE campaigns SET definition='{\"factors\": 7}' WHERE name='broken'")
    con.commit()
    con.close()
    proc = perflab("analyze", "broken", "--store", "s.db", cwd=work)
    assert proc.returncode == 3, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("perflab: internal error:"), proc.stderr
    path = Path(lines[0].rsplit("traceback in ", 1)[1].strip().rstrip(")"))
    assert "Traceback" in path.read_text()
