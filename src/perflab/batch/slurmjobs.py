"""What the Parsl runner needs from Slurm besides Parsl: a check before anything runs, the
state and reason of its jobs while it runs, and the clean-up of a killed driver's jobs.

* ``check_provider`` asks Slurm itself (``scontrol show partition``) whether the commands are
  on PATH, munge authenticates and the partition exists; one line naming what is wrong.
* ``JobWatch`` reads each job's state and reason from ``scontrol show job`` (Parsl's
  SlurmProvider polls once a minute and, without accounting, reports a cancelled job as
  completed): a job that ended CANCELLED/FAILED/TIMEOUT/… is named with Slurm's own words,
  including the ``*** JOB … CANCELLED …`` line slurmstepd writes to the job's stderr file
  (the path Parsl's JobStatus exposes).
* ``Leftovers`` writes the driver's job ids and its interchange's PID to a private file; the
  next driver cancels the jobs and stops the interchange of a driver that died (SIGKILL)
  without doing it, so a resume never waits behind a dead driver's workers.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

import psutil

from perflab import files
from perflab.errors import PerflabError

#: Slurm job states that end a job without its work being done.
BAD_END = {
    "CANCELLED", "FAILED", "TIMEOUT", "NODE_FAIL", "OUT_OF_MEMORY", "BOOT_FAIL",
    "DEADLINE", "PREEMPTED", "REVOKED", "SPECIAL_EXIT",
}  # fmt: skip
#: States in which Slurm killed the job (slurmstepd says so in the job's stderr file).
KILLED = {"CANCELLED", "TIMEOUT", "DEADLINE", "PREEMPTED", "OUT_OF_MEMORY"}
#: States after which a job holds no worker any more.
ENDED = BAD_END | {"COMPLETED"}
#: Seconds to wait for slurmstepd's line in the job's stderr file once a job ended badly.
STDERR_WAIT_S = 3.0
COMMANDS = ("sbatch", "squeue", "scontrol", "scancel")


def _slurm(*argv: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        list(argv), capture_output=True, text=True, timeout=30, env=env, stdin=subprocess.DEVNULL
    )


def check_provider(provider: Any, where: str) -> None:
    """PerflabError (one line, naming ``where`` and the cause) unless Slurm's commands are on
    PATH, the controller answers with munge's credentials and the provider's partition (or
    any partition, when it names none) exists."""
    missing = [c for c in COMMANDS if shutil.which(c) is None]
    if missing:
        raise PerflabError(
            f"{where}: SlurmProvider needs Slurm's {', '.join(missing)} on PATH (not found; "
            "on Debian: apt-get install slurm-client)"
        )
    part = provider.partition
    out = _slurm("scontrol", "show", "partition", *([part] if part else []))
    text = " ".join((out.stderr or out.stdout).split())
    if "munge" in text.lower():
        found = re.search(r"Munge (?:en|de)code failed: ([^(]*)", text)
        raise PerflabError(
            f"{where}: Slurm cannot authenticate: munge is not running or refused it "
            f"({found.group(1).strip() if found else text[:200]})"
        )
    if part and (out.returncode != 0 and "not found" in text.lower()):
        raise PerflabError(f"{where}: Slurm partition {part!r} does not exist ({text[:200]})")
    if out.returncode != 0:
        raise PerflabError(f"{where}: Slurm does not answer: {text[:300]}")
    if not part and "PartitionName=" not in out.stdout:
        raise PerflabError(f"{where}: Slurm has no partition to submit to")


#: What ``job_state`` returns while the controller does not answer (restarting, say).
UNREACHABLE = {"JobState": "UNREACHABLE"}


def job_state(job_id: str, env: dict[str, str] | None = None) -> dict[str, str]:
    """``JobState``, ``Reason``, ``ExitCode`` … of one job from ``scontrol show job``
    (empty once the controller forgot it, MinJobAge after it ended; ``UNREACHABLE`` while
    the controller does not answer: the job's fate is unknown, not over)."""
    out = _slurm("scontrol", "show", "job", "-o", job_id, env=env)
    if out.returncode != 0:
        return {} if "invalid job id" in out.stderr.lower() else dict(UNREACHABLE)
    pairs = re.findall(r"(\w+)=(\S*)", out.stdout)
    return {k: v for k, v in pairs}


class JobWatch:
    """The Slurm jobs of a loaded Parsl config's SlurmProviders: which still hold workers,
    and why the others ended."""

    def __init__(self, providers: list[Any]) -> None:
        self.providers = providers
        self.ended: dict[str, str] = {}  # job id -> Slurm's words, for jobs ended badly
        self.nodes: dict[str, str] = {}  # job id -> the node(s) it ran on
        self._done: set[str] = set()
        self._polls = 0
        self._ended_at: dict[str, int] = {}  # job id -> the poll that saw it end badly
        self._replaced: set[str] = set()

    def job_ids(self) -> list[str]:
        return [str(j) for p in self.providers for j in list(p.resources)]

    def release(self, wait_s: float = 30.0) -> list[str]:
        """Cancel this driver's jobs that Slurm still holds and wait, up to ``wait_s``, until
        none is pending, running or completing; returns the ids still held then. Parsl's
        cleanup cancels the blocks it knows of and returns before Slurm has ended them."""
        ids = set(self.job_ids())
        held = _held(ids)
        live = sorted(j for j, state in held.items() if state != "CG")
        if live:
            _slurm("scancel", *live)
        deadline = time.monotonic() + wait_s
        while held and time.monotonic() < deadline:
            time.sleep(0.2)
            held = _held(ids)
        return sorted(held)

    def _stderr_of(self, job_id: str) -> str | None:
        for p in self.providers:
            if job_id in p.resources:
                return p.resources[job_id].get("job_stderr_path")
        return None

    def poll(self) -> tuple[int, int]:
        """Update the states; returns (jobs submitted, jobs still pending or running)."""
        ids = self.job_ids()
        self._polls += 1
        for jid in ids:
            if jid in self._done:
                continue
            st = job_state(jid)
            state = st.get("JobState", "")
            if state == UNREACHABLE["JobState"]:
                continue  # the controller is away: ask again next time
            if st.get("NodeList") and st["NodeList"] != "(null)":
                self.nodes[jid] = st["NodeList"]
            if state in ENDED or not st:  # forgotten: long ended
                self._done.add(jid)
            if state in BAD_END:
                self.ended[jid] = self._describe(jid, st)
                self._ended_at.setdefault(jid, self._polls)
        return len(ids), len([j for j in ids if j not in self._done])

    def to_replace(self) -> list[Any]:
        """The provider of each job that ended badly at an earlier poll than this one (a
        node's death, a preemption, a job cancelled: while others hold or wait for workers,
        which the caller checks), each job once, at most each provider's ``max_blocks`` in
        all: each is worth a new block, which a node that comes back, or another one, takes.
        A poll apart: a whole partition cancelled at once has no job left by then."""
        out = []
        for jid, at in sorted(self._ended_at.items()):
            if at >= self._polls or jid in self._replaced:
                continue
            provider = next((p for p in self.providers if jid in p.resources), None)
            done = sum(1 for j in self._replaced if provider and j in provider.resources)
            if provider is not None and done < max(1, int(provider.max_blocks)):
                self._replaced.add(jid)
                out.append(provider)
        return out

    def _describe(self, jid: str, st: dict[str, str]) -> str:
        words = f"Slurm job {jid} {st.get('JobState')} (Reason={st.get('Reason')}"
        words += f", ExitCode={st.get('ExitCode')})"
        path = self._stderr_of(jid)
        killed = st.get("JobState") in KILLED
        said: list[str] = []
        # a killed job: slurmstepd's own line (*** JOB 7 ON node CANCELLED AT … ***, or
        # *** STEP 7.0 … for the job step, whichever it wrote last), written
        # as it kills the job, a moment after the controller already says so; a job that
        # failed by itself: the last line its script wrote (a worker_init that went wrong)
        deadline = time.monotonic() + (STDERR_WAIT_S if killed else 0)
        while path:
            with contextlib.suppress(OSError):
                lines = Path(path).read_text(errors="replace").splitlines()
                said = [ln.strip() for ln in lines if "***" in ln or not killed and ln.strip()]
            if said or time.monotonic() > deadline:
                break
            time.sleep(0.2)
        return f"{words}: {said[-1][:300]}" if said else words

    def reason(self) -> str:
        """Why the jobs that ended badly ended, in Slurm's words (empty if none did)."""
        return "; ".join(self.ended.values())

    def reason_on(self, node: str) -> str:
        """Why the jobs that ran on ``node`` and ended badly ended (empty if none did)."""
        return "; ".join(w for j, w in self.ended.items() if self.nodes.get(j) == node)


def _held(ids: set[str]) -> dict[str, str]:
    """Which of ``ids`` squeue still lists, with their compact state (``R``, ``CG`` …)."""
    if not ids:
        return {}
    out = _slurm("squeue", "-h", "-o", "%i %t")
    if out.returncode != 0:
        return {}  # the controller is away: nothing this driver can wait for
    rows = (line.split() for line in out.stdout.splitlines())
    return {r[0]: r[1] for r in rows if len(r) == 2 and r[0] in ids}


class Leftovers:
    """This driver's Slurm jobs and interchange, on file while it runs (0600, in a private
    directory of perflab's home), so that a later driver can clean up after a killed one."""

    def __init__(self) -> None:
        self.dir = files.home_dir("slurm-drivers")
        me = psutil.Process()
        self.path = self.dir / f"{me.pid}-{me.create_time():.2f}.json"
        self._written: str | None = None

    def record(self, job_ids: list[str], interchanges: list[int]) -> None:
        procs = []
        for pid in interchanges:
            with contextlib.suppress(psutil.Error):
                procs.append([pid, psutil.Process(pid).create_time()])
        data = json.dumps(
            {"jobs": sorted(job_ids), "interchanges": procs,
             "slurm_conf": os.environ.get("SLURM_CONF")}
        )  # fmt: skip
        if data != self._written:
            files.atomic_write(self.path, data)
            os.chmod(self.path, 0o600)
            self._written = data

    def forget(self) -> None:
        self.path.unlink(missing_ok=True)

    def sweep(self) -> list[str]:
        """Cancel the jobs and stop the interchanges of drivers that died without doing it;
        returns the job ids cancelled."""
        cancelled: list[str] = []
        for f in self.dir.glob("*.json"):
            pid, _, created = f.stem.partition("-")
            with contextlib.suppress(ValueError):
                if _alive(int(pid), float(created)):
                    continue
            with contextlib.suppress(OSError, ValueError):
                data = json.loads(f.read_text())
                for ipid, ictime in data.get("interchanges", []):
                    if _alive(int(ipid), float(ictime)):
                        with contextlib.suppress(psutil.Error):
                            psutil.Process(int(ipid)).kill()
                jobs = [str(j) for j in data.get("jobs", [])]
                if jobs and shutil.which("scancel"):
                    env = dict(os.environ)
                    if data.get("slurm_conf"):
                        env["SLURM_CONF"] = data["slurm_conf"]
                    _slurm("scancel", *jobs, env=env)
                    cancelled += jobs
            f.unlink(missing_ok=True)
        return cancelled


def _alive(pid: int, created: float) -> bool:
    try:
        p = psutil.Process(pid)
        return abs(p.create_time() - created) < 0.05 and p.status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False
