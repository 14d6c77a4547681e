"""Environment snapshot stored with each run: enough to tell two machines or days apart."""

from __future__ import annotations

import functools
import importlib.metadata
import json
import os
import platform
import subprocess
from collections.abc import Iterable
from typing import Any


@functools.cache
def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


_VERSIONS = (
    "import json, sys, importlib.metadata as m\n"
    "out = {}\n"
    "for n in sys.argv[1:]:\n"
    "    try:\n"
    "        out[n] = m.version(n)\n"
    "    except m.PackageNotFoundError:\n"
    "        out[n] = None\n"
    "print(json.dumps(out))"
)


@functools.cache
def _versions_in(python: str, names: tuple[str, ...]) -> dict[str, str | None]:
    """Package versions as the interpreter ``python`` sees them (a venv's own)."""
    try:
        out = subprocess.run(
            [python, "-c", _VERSIONS, *names], capture_output=True, text=True, timeout=30
        )
        return dict(json.loads(out.stdout))
    except (OSError, ValueError, subprocess.TimeoutExpired):
        return dict.fromkeys(names)


def package_versions(names: Iterable[str], python: str | None = None) -> dict[str, str | None]:
    """Installed versions of ``names`` here, or as the interpreter ``python`` sees them when
    given (perflab itself always comes from here: the measured child imports it through
    PYTHONPATH)."""
    names = list(names)
    if python is not None:
        theirs = _versions_in(python, tuple(n for n in names if n != "perflab"))
        here = package_versions(["perflab"])["perflab"]
        return {n: here if n == "perflab" else theirs.get(n) for n in names}
    return {name: _version(name) for name in names}


@functools.cache
def _version(name: str) -> str | None:
    # cached: a metadata lookup scans site-packages (~2 ms each, per run of a campaign)
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return None


@functools.cache
def python_version(python: str | None) -> str:
    if python is None:
        return platform.python_version()
    try:
        out = subprocess.run(
            [python, "-c", "import platform; print(platform.python_version())"],
            capture_output=True,
            text=True,
            timeout=30,
        )
        return out.stdout.strip() or "unknown"
    except (OSError, subprocess.TimeoutExpired):
        return "unknown"


#: The batch system's variables worth keeping (Slurm's, inside a job): which job and step.
_SLURM = {
    "job_id": "SLURM_JOB_ID", "step_id": "SLURM_STEP_ID", "partition": "SLURM_JOB_PARTITION",
    "node": "SLURMD_NODENAME", "cluster": "SLURM_CLUSTER_NAME",
}  # fmt: skip


def batch_job() -> dict[str, Any] | None:
    """The Slurm job and step this process runs in (None outside a batch job)."""
    if "SLURM_JOB_ID" not in os.environ:
        return None
    return {"scheduler": "slurm", **{k: os.environ.get(v) for k, v in _SLURM.items()}}


def snapshot(packages: Iterable[str] = (), python: str | None = None) -> dict[str, Any]:
    """Python, platform, CPU, cores, package versions and the load average, taken now (and,
    inside a batch job, its ids under ``batch``)."""
    batch = batch_job()
    return {
        "python": python_version(python),
        "python_executable": python,
        "platform": platform.platform(),
        "hostname": platform.node(),
        "cpu": cpu_model(),
        "cores": os.cpu_count(),
        "packages": package_versions(["perflab", *packages], python),
        "loadavg_before": list(os.getloadavg()),
        **({"batch": batch} if batch else {}),
    }


def cpu_times() -> tuple[int, int] | None:
    """(all CPU ticks, steal ticks) from /proc/stat's ``cpu`` line; None where unreadable or
    without a steal column."""
    try:
        with open("/proc/stat") as f:
            fields = f.readline().split()
    except OSError:
        return None
    if len(fields) < 9 or fields[0] != "cpu":
        return None
    ticks = [int(x) for x in fields[1:9]]  # user … steal; guest is counted in user already
    return sum(ticks), ticks[7]


def cpu_pressure(path: str = "/proc/pressure/cpu") -> dict[str, float]:
    """The CPU pressure's avg10 (% of the last 10 s some or all tasks waited for a CPU),
    as ``cpu_some_avg10``/``cpu_full_avg10``; empty where the kernel has no PSI."""
    out: dict[str, float] = {}
    try:
        with open(path) as f:
            lines = f.read().splitlines()
    except OSError:
        return out
    for line in lines:
        kind, *pairs = line.split()
        values = dict(p.split("=", 1) for p in pairs if "=" in p)
        if kind in ("some", "full") and "avg10" in values:
            out[f"cpu_{kind}_avg10"] = float(values["avg10"])
    return out


def load_now(since: tuple[int, int] | None = None) -> dict[str, float]:
    """The node's load as a run ends: the 1-min load average, the CPU pressure (where the
    kernel has PSI) and, where the hypervisor steals any time, the share of CPU time stolen
    since ``since`` (``cpu_times()`` as the run began), in %."""
    out: dict[str, float] = {"loadavg_1m": os.getloadavg()[0], **cpu_pressure()}
    now = cpu_times()
    if since is not None and now is not None and now[1] > 0 and now[0] > since[0]:
        out["steal_pct"] = 100.0 * (now[1] - since[1]) / (now[0] - since[0])
    return out
