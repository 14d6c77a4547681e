"""``perflab atlas`` as a user runs it, with real runs of a command through ``prepare``: bad
input is one line and exit 2 with nothing written; a second update is kept out by the lock;
a SIGKILL in the middle of an update (a real process, a real kill) loses no stored run, and
the next update resumes without measuring a point twice."""

from __future__ import annotations

import fcntl
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from atlasrepo import SCORE, make_repo, private_home  # noqa: F401
from click.testing import CliRunner, Result

from attacker import NOBODY, needs_root
from perflab.cli import main

ROOT = Path(__file__).resolve().parents[2]


def cli(*args: str) -> Result:
    return CliRunner().invoke(main, ["atlas", *args])


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("atlas-cli") / "repo"
    make_repo(root)
    return root


def init_args(d: Path, repo: Path) -> list[str]:
    return ["init", str(d), "--repo", str(repo), "--package", "toyatlas", "--name", "score",
            "--command", SCORE, "--metric", "us_per_task", "--runs", "3"]  # fmt: skip


def one_line(res: Result, says: str) -> None:
    assert res.exit_code == 2, res.output
    assert res.stderr.count("\n") == 1 and says in res.stderr, res.stderr


def test_a_path_that_is_not_a_clone_of_the_package_is_one_line_and_writes_nothing(
    repo: Path, tmp_path: Path
) -> None:
    d = tmp_path / "atlas"
    one_line(cli(*init_args(d, tmp_path)), "not a git clone")
    args = init_args(d, repo)
    args[args.index("toyatlas")] = "parsl"
    one_line(cli(*args), "not a clone of parsl")
    assert not d.exists()


def test_a_store_that_cannot_be_written_is_one_line_and_writes_nothing(
    repo: Path, tmp_path: Path
) -> None:
    # /proc refuses a new directory even to root
    one_line(cli(*init_args(Path("/proc/self/atlas"), repo)), "/proc/self/atlas")
    one_line(cli("status", str(tmp_path / "none")), "no atlas here")


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes through file modes")
def test_a_read_only_store_is_one_line_and_writes_nothing(repo: Path, tmp_path: Path) -> None:
    d = tmp_path / "atlas"
    d.mkdir(mode=0o500)
    one_line(cli(*init_args(d, repo)), "cannot be written")
    assert list(d.iterdir()) == []
    d.chmod(0o700)
    assert cli(*init_args(d, repo)).exit_code == 0
    (d / "atlas.sqlite").chmod(0o400)
    one_line(cli("update", str(d)), "cannot be written")


@needs_root
def test_an_atlas_dir_owned_by_another_user_is_refused_and_left_alone(
    repo: Path, tmp_path: Path
) -> None:
    """A directory another local user planted (or owns) could hold his store and project
    file: every verb refuses it, one line naming the owner, and writes nothing in it."""
    d = tmp_path / "atlas"
    assert cli(*init_args(d, repo)).exit_code == 0
    os.chown(d, NOBODY, NOBODY)
    before = {f.name: f.stat().st_mtime_ns for f in d.iterdir()}
    site = str(tmp_path / "site")
    for args in (["status", str(d)], ["update", str(d)], ["publish", str(d), "-o", site],
                 ["add", str(d), "more", "--command", "true"]):  # fmt: skip
        one_line(cli(*args), f"belongs to uid {NOBODY}")
    assert {f.name: f.stat().st_mtime_ns for f in d.iterdir()} == before
    assert not (tmp_path / "site").exists()


def test_a_second_update_is_kept_out_by_the_lock(repo: Path, tmp_path: Path) -> None:
    d = tmp_path / "atlas"
    assert cli(*init_args(d, repo)).exit_code == 0
    fd = os.open(d / ".lock", os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        one_line(cli("update", str(d)), "another atlas update is running")
    finally:
        os.close(fd)


def _runs(d: Path) -> list[tuple[int, str]]:
    db = sqlite3.connect(d / "atlas.sqlite")
    try:
        return list(db.execute("SELECT id, point FROM runs ORDER BY id"))
    finally:
        db.close()


def test_a_sigkill_mid_update_loses_nothing_and_the_next_update_resumes(
    repo: Path, tmp_path: Path
) -> None:
    d = tmp_path / "atlas"
    assert cli(*init_args(d, repo)).exit_code == 0
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    cmd = [sys.executable, "-m", "perflab", "atlas", "update", str(d)]
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 120
        while (
            not (d / "atlas.sqlite").exists() or len(_runs(d)) < 10
        ) and time.monotonic() < deadline:
            time.sleep(0.2)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    before = _runs(d)
    assert len(before) >= 10
    res = cli("update", str(d), "--max-time", "4")
    assert res.exit_code == 0, res.output
    after = _runs(d)
    assert after[: len(before)] == before  # every stored run kept, none rewritten
    per_point: dict[str, int] = {}
    for _, point in after:
        per_point[point] = per_point.get(point, 0) + 1
    assert max(per_point.values()) <= 3  # no point measured again beyond its planned runs
    assert "queued for the next update" in res.output or len(per_point) >= 59
    st = cli("status", str(d), "--json")
    assert st.exit_code == 0 and '"runs"' in st.output


def test_the_releases_axis_measures_the_tagged_commits_up_to_until(repo: Path) -> None:
    from atlasrepo import git

    from perflab.atlas.define import _ref
    from perflab.atlas.points import axis_points

    shas = git(repo, "log", "--first-parent", "--reverse", "--format=%H").split()
    git(repo, "tag", "2026.01.05", shas[10])
    git(repo, "tag", "2026.02.02", shas[20])
    until = _ref(repo, "2026.2.2", "toyatlas")  # a release named by its version
    assert until == shas[20]
    rows = axis_points(repo, shas[5], "releases", 1, until)
    assert [r["key"] for r in rows] == shas[5:21]
    on = [r["key"] for r in rows if r["on_axis"]]
    assert on == [shas[5], shas[10], shas[20]]
    assert rows[5]["release"] == "2026.01.05" and rows[5]["pr"] == 110
    every = [r["key"] for r in axis_points(repo, shas[5], "commits", 4, until) if r["on_axis"]]
    assert every == [shas[5], shas[9], shas[13], shas[17], shas[20]]
