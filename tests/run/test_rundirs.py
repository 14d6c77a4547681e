"""Run directories, their job files and the store are this user's alone (issue 24)."""

from __future__ import annotations

import json
import os
import shlex
import stat
import subprocess
import sys
from pathlib import Path

from attacker import needs_root
from conftest import ROOT, perflab

SHM_ROOT = f"/dev/shm/perflab-{os.geteuid()}"


@needs_root
def test_a_tmpfs_run_root_another_user_made_first_is_refused(tmp_path: Path) -> None:
    """In a private mount namespace (the real /dev/shm is untouched), nobody makes the
    per-user run root first, open to all; a run with cfg_rundir_ramfs must refuse it."""
    run = shlex.join([sys.executable, "-m", "perflab", "run", "--command", "echo 1",
                      "--treat", "cfg_rundir_ramfs"])  # fmt: skip
    script = (
        "mount -t tmpfs -o mode=1777 tmpfs /dev/shm && "
        f"setpriv --reuid=65534 --regid=65534 --clear-groups mkdir -m 777 {SHM_ROOT} && "
        f"cd {shlex.quote(str(tmp_path))} && {run}; echo rc=$?; ls -la {SHM_ROOT}"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    out = subprocess.run(
        ["unshare", "--mount", "--propagation", "private", "sh", "-c", script],
        capture_output=True, text=True, env=env, timeout=120,
    )  # fmt: skip
    assert "rc=2" in out.stdout, out.stdout + out.stderr
    errors = [ln for ln in out.stderr.splitlines() if ln.startswith("perflab: error")]
    assert len(errors) == 1 and SHM_ROOT in errors[0] and "uid 65534" in errors[0]
    # nothing ran there: the directory he made is as empty as he left it
    assert out.stdout.count("\n") <= 5 and "job.json" not in out.stdout
    assert not (tmp_path / ".perflab").exists() or not any((tmp_path / ".perflab").rglob("*.db"))


def test_run_dirs_are_0700_and_job_files_and_the_store_0600(tmp_path: Path) -> None:
    r = perflab(
        "run",
        "--metric",
        "us_per_task",
        "--command",
        "echo 1",
        "--keep-run-dir",
        "--json",
        cwd=tmp_path,
    )
    assert r.returncode == 0, r.stderr
    run_dir = Path(json.loads(r.stdout)["measurement"]["run_dir"])
    mode = lambda p: stat.S_IMODE(p.stat().st_mode)  # noqa: E731
    assert mode(tmp_path / ".perflab") == 0o700 and mode(run_dir.parent) == 0o700
    assert mode(run_dir) == 0o700 and mode(run_dir / "job.json") == 0o600
    r = perflab("campaign", "create", "c", "--command", "echo 1", "--factors", "a,b",
                "--metric", "us_per_task",
                "--design", "full", cwd=tmp_path)  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert mode(tmp_path / ".perflab" / "perflab.db") == 0o600
