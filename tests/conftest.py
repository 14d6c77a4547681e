from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import psutil
import pytest

ROOT = Path(__file__).resolve().parent.parent
PERFLAB = [sys.executable, "-m", "perflab"]


@pytest.fixture
def run_root(tmp_path: Path) -> str:
    return str(tmp_path / "runs")


def perflab(
    *args: str, cwd: Path | None = None, timeout: float = 300
) -> subprocess.CompletedProcess:
    """Run the real CLI in a subprocess, as a user would."""
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT / "src")
    return subprocess.run(
        [*PERFLAB, *args], capture_output=True, text=True, timeout=timeout, cwd=cwd, env=env
    )


def perflab_json(*args: str, **kw) -> dict:
    proc = perflab(*args, "--json", **kw)
    assert proc.stdout.strip(), proc.stderr
    lines = proc.stdout.strip().splitlines()
    assert len(lines) == 1, "--json must print exactly one JSON object"
    return json.loads(lines[0])


def alive(pids_seen: list[list[float]]) -> list[int]:
    """The recorded processes that still exist (same pid *and* creation time)."""
    out = []
    for pid, created in pids_seen:
        try:
            p = psutil.Process(int(pid))
            if abs(p.create_time() - created) < 0.01 and p.status() != psutil.STATUS_ZOMBIE:
                out.append(int(pid))
        except psutil.Error:
            continue
    return out
