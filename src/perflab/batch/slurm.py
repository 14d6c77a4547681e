"""A throwaway single-node Slurm on this machine: munged, slurmctld and slurmd, all ours.

Real Slurm (Debian's ``slurmctld``, ``slurmd``, ``slurm-client`` and ``munge``), not a mock:
``sbatch``, ``srun``, ``squeue`` and Parsl's ``SlurmProvider`` talk to it as to any cluster
once ``SLURM_CONF`` points at its configuration (``cluster.env()``).

Everything lives in one 0700 directory (``files.private_dir``): the munge key, munged's
socket, slurm.conf, the controller's state, slurmd's spool and every log. munged listens on
its own socket there (``--socket``; ``--force`` because munged wants the socket's parents
world-searchable, which a private directory is not: only this user can reach it, which is
the point), and Slurm finds it through ``AuthInfo=socket=``. slurmctld and slurmd listen on
free loopback ports. Nothing is read from or written to /etc/slurm or /etc/munge.

Stopping: jobs are cancelled, then slurmd, slurmctld and munged are stopped by PID. slurmd's
step daemons (slurmstepd) detach from it, so each daemon is started with
``PERFLAB_SLURM_DIR=<dir>`` in its environment, which the step daemons inherit: any process
still carrying it (or our ``SLURM_CONF``) after the daemons are gone is ours and is killed
by PID. A cluster whose owner died without stopping it (SIGKILL) is swept the same way by
the next ``start()``: its directory is named after the owner's PID.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import pwd
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
from pathlib import Path
from types import FrameType
from typing import Any

import psutil

from perflab import files
from perflab.errors import PerflabError

#: The environment variable that marks every process of one throwaway cluster.
MARKER = "PERFLAB_SLURM_DIR"
#: Seconds the daemons get to come up (slurmd registering with the controller included).
START_TIMEOUT_S = 30.0
#: The Debian packages that provide the daemons and commands (scripts/setup installs them).
PACKAGES = "slurmctld slurmd slurm-client munge"
_PREFIX = "perflab-slurm-"


def free_port() -> int:
    """A loopback TCP port that was free a moment ago."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def binary(name: str) -> str:
    """The path of a Slurm or munge program; a PerflabError naming it if it is missing."""
    path = shutil.which(name) or next(
        (f"{d}/{name}" for d in ("/usr/sbin", "/sbin") if os.access(f"{d}/{name}", os.X_OK)),
        None,
    )
    if path is None:
        raise PerflabError(f"{name} is not installed (apt-get install {PACKAGES}; scripts/setup)")
    return path


class SlurmCluster:
    """One single-node Slurm cluster (``partition`` on node ``node``) under ``root``.

    Use as a context manager, or call ``start()`` and ``stop()``; ``stop()`` also runs at
    interpreter exit. ``root`` defaults to a new directory under $TMPDIR.
    """

    def __init__(
        self,
        root: str | Path | None = None,
        partition: str = "perflab",
        node: str = "perflab1",
        cpus: int | None = None,
    ) -> None:
        self._made_root = root is None
        base = Path(root) if root else Path(tempfile.mkdtemp(prefix=f"{_PREFIX}{os.getpid()}-"))
        self.root = files.private_dir(base)
        self.partition, self.node = partition, node
        self.cpus = cpus or os.cpu_count() or 1
        self.ctld_port, self.slurmd_port = free_port(), free_port()
        self.conf = self.root / "slurm.conf"
        self.munge_socket = self.root / "munge" / "munge.socket"
        self.procs: dict[str, subprocess.Popen[bytes]] = {}
        self._stopped = False

    def env(self) -> dict[str, str]:
        """What a client needs in its environment to use this cluster."""
        return {"SLURM_CONF": str(self.conf)}

    def __enter__(self) -> SlurmCluster:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def start(self) -> None:
        """Start munged, slurmctld and slurmd; return once the node takes jobs (PerflabError
        with the daemon's log if one does not come up; whatever started is stopped)."""
        sweep_dead_clusters()
        atexit.register(self.stop)
        _stop_on_sigterm(self)
        try:
            self._start_munged()
            self._write_conf()
            self._spawn("slurmctld", [binary("slurmctld"), "-D", "-i", "-f", str(self.conf)])
            self._wait(lambda: _port_open(self.ctld_port), "slurmctld")
            (self.root / "spool").mkdir(mode=0o700, exist_ok=True)
            argv = [binary("slurmd"), "-D", "-N", self.node, "-f", str(self.conf)]
            self._spawn("slurmd", argv)
            self._wait(self._node_ready, "slurmd")
        except BaseException:
            self.stop()
            raise

    def _start_munged(self) -> None:
        mdir = files.private_dir(self.root / "munge")
        key = mdir / "munge.key"
        if not key.exists():
            files.create_private(key, os.urandom(1024))
        self._spawn(
            "munged",
            [
                binary("munged"),
                "--foreground",
                "--force",
                f"--socket={self.munge_socket}",
                f"--key-file={key}",
                f"--pid-file={mdir / 'munged.pid'}",
                f"--log-file={mdir / 'munged.log'}",
                f"--seed-file={mdir / 'munged.seed'}",
            ],
        )
        self._wait(self.munge_socket.exists, "munged")

    def _write_conf(self) -> None:
        user = pwd.getpwuid(os.geteuid()).pw_name
        r = self.root
        lines = [
            "ClusterName=perflab",
            # slurmctld only runs where SlurmctldHost names this host (its short name)
            f"SlurmctldHost={socket.gethostname().split('.')[0]}(127.0.0.1)",
            f"SlurmctldPort={self.ctld_port}",
            f"SlurmdPort={self.slurmd_port}",
            f"SlurmUser={user}",
            f"SlurmdUser={user}",
            # bind to the address the node's names resolve to (127.0.0.1 here), not every
            # interface: the daemons are then reachable from this machine only
            "CommunicationParameters=NoInAddrAny,NoCtldInAddrAny",
            "AuthType=auth/munge",
            "CredType=cred/munge",
            f"AuthInfo=socket={self.munge_socket}",
            f"StateSaveLocation={r / 'state'}",
            f"SlurmdSpoolDir={r / 'spool'}",
            f"SlurmctldPidFile={r / 'slurmctld.pid'}",
            f"SlurmdPidFile={r / 'slurmd.pid'}",
            f"SlurmctldLogFile={r / 'slurmctld.log'}",
            f"SlurmdLogFile={r / 'slurmd.log'}",
            # no cgroups here: processes are tracked by parentage, tasks are not bound
            "ProctrackType=proctrack/linuxproc",
            "TaskPlugin=task/none",
            "JobAcctGatherType=jobacct_gather/none",
            "AccountingStorageType=accounting_storage/none",
            "JobCompType=jobcomp/none",
            "SwitchType=switch/none",
            "MpiDefault=none",
            "MailProg=/bin/true",
            "SchedulerType=sched/backfill",
            # one CPU is the unit: several jobs share the node, one per CPU
            "SelectType=select/cons_tres",
            "SelectTypeParameters=CR_CPU",
            "ReturnToService=2",
            # ended jobs stay visible to scontrol (their state and reason) for 10 minutes
            "MinJobAge=600",
            "KillWait=2",
            "InactiveLimit=0",
            f"NodeName={self.node} NodeAddr=127.0.0.1 NodeHostname={socket.gethostname()} "
            f"CPUs={self.cpus} State=UNKNOWN",
            f"PartitionName={self.partition} Nodes={self.node} Default=YES "
            "MaxTime=INFINITE State=UP",
        ]
        files.private_dir(r / "state")
        if self.conf.exists():
            self.conf.unlink()
        files.create_private(self.conf, "\n".join(lines) + "\n")
        # slurmd and the clients (running as other users on a real cluster) read it
        os.chmod(self.conf, 0o644)

    def _spawn(self, name: str, argv: list[str]) -> None:
        env = {**os.environ, **self.env(), MARKER: str(self.root)}
        log = self.root / f"{name}.out"
        with open(log, "ab") as out:
            self.procs[name] = subprocess.Popen(
                argv,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                env=env,
                start_new_session=True,  # a Ctrl-C in the terminal is ours to handle
            )

    def _wait(self, ready: Any, name: str) -> None:
        deadline = time.monotonic() + START_TIMEOUT_S
        while not ready():
            proc = self.procs[name]
            if proc.poll() is not None or time.monotonic() > deadline:
                why = (
                    f"exited with code {proc.returncode}"
                    if proc.returncode is not None
                    else ("did not come up in time")
                )
                raise PerflabError(f"throwaway Slurm: {name} {why}: {self.log_tail(name)}")
            time.sleep(0.1)

    def _node_ready(self) -> bool:
        out = self.run("sinfo", "-h", "-n", self.node, "-o", "%T", check=False)
        return out.returncode == 0 and out.stdout.strip().rstrip("*") in ("idle", "mixed")

    def log_tail(self, name: str) -> str:
        """The last lines a daemon wrote (its own log file, else its output)."""
        texts = []
        for p in (self.root / f"{name}.log", self.root / f"{name}.out"):
            with contextlib.suppress(OSError):
                texts.append(p.read_text(errors="replace"))
        return " | ".join(" ".join(t.split())[-400:] for t in texts if t.strip())

    def run(self, *argv: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        """Run a Slurm client command (``squeue``, ``sbatch``…) against this cluster."""
        env = {**os.environ, **self.env()}
        return subprocess.run(
            [binary(argv[0]), *argv[1:]], capture_output=True, text=True, env=env,
            timeout=30, check=check,
        )  # fmt: skip

    def jobs(self) -> list[str]:
        """The ids of the jobs the controller still holds as pending or running."""
        out = self.run("squeue", "-h", "-o", "%i", check=False)
        return out.stdout.split() if out.returncode == 0 else []

    def stop(self) -> None:
        """Cancel every job, stop the daemons by PID, then every process that still carries
        this cluster's marker; remove the directory if this object made it. Idempotent."""
        if self._stopped:
            return
        self._stopped = True
        with contextlib.suppress(Exception):
            if "slurmd" in self.procs and self.jobs():
                self.run("scancel", "--partition", self.partition, check=False)
                deadline = time.monotonic() + 10
                while self.jobs() and time.monotonic() < deadline:
                    time.sleep(0.2)
        for name in ("slurmd", "slurmctld", "munged"):
            proc = self.procs.get(name)
            if proc is not None:
                _stop_tree(proc.pid)
                with contextlib.suppress(subprocess.TimeoutExpired):
                    proc.wait(timeout=5)
        kill_marked(str(self.root), str(self.conf))
        with contextlib.suppress(Exception):
            atexit.unregister(self.stop)
        if self in _LIVE:
            _LIVE.remove(self)
        if self._made_root:
            shutil.rmtree(self.root, ignore_errors=True)


#: Clusters of this process that SIGTERM must stop (atexit does not run on a signal).
_LIVE: list[SlurmCluster] = []


def _stop_on_sigterm(cluster: SlurmCluster) -> None:
    """Stop ``cluster`` if this process gets SIGTERM while SIGTERM would otherwise just end it
    (Python's default): then die of SIGTERM as before. A handler someone else installed
    (a CLI's, the script's) is left alone; it ends in atexit."""
    _LIVE.append(cluster)
    if threading.current_thread() is not threading.main_thread():
        return
    if signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL:
        return

    def on_term(signum: int, frame: FrameType | None) -> None:
        for c in list(_LIVE):
            c.stop()
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGTERM)

    signal.signal(signal.SIGTERM, on_term)


def _port_open(port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(0.5)
        return s.connect_ex(("127.0.0.1", port)) == 0


def _stop_tree(pid: int, grace_s: float = 3.0) -> None:
    """SIGTERM a process and its descendants, SIGKILL what is alive after ``grace_s``."""
    try:
        root = psutil.Process(pid)
        procs = [*root.children(recursive=True), root]
    except psutil.Error:
        return
    for p in procs:
        with contextlib.suppress(psutil.Error):
            p.terminate()
    _, alive = psutil.wait_procs(procs, timeout=grace_s)
    for p in alive:
        with contextlib.suppress(psutil.Error):
            p.kill()
    psutil.wait_procs(alive, timeout=grace_s)


def marked(root: str, conf: str | None = None) -> list[psutil.Process]:
    """This user's processes started by the cluster at ``root`` (its marker in their
    environment), or by a client of it (``SLURM_CONF=conf``), except this process and its
    ancestors."""
    mine = {os.getpid(), *(p.pid for p in psutil.Process().parents())}
    wanted = {f"{MARKER}={root}"} | ({f"SLURM_CONF={conf}"} if conf else set())
    out = []
    for p in psutil.process_iter(["uids"]):
        with contextlib.suppress(psutil.Error, OSError):
            if p.pid in mine or p.info["uids"].real != os.getuid():
                continue
            with open(f"/proc/{p.pid}/environ", "rb") as f:
                env = set(f.read().decode(errors="replace").split("\0"))
            if env & wanted:
                out.append(p)
    return out


def kill_marked(root: str, conf: str | None = None) -> None:
    """Stop every process ``marked`` as the cluster's at ``root``, by PID."""
    procs = marked(root, conf)
    for p in procs:
        with contextlib.suppress(psutil.Error):
            p.kill()
    psutil.wait_procs(procs, timeout=5)


def sweep_dead_clusters() -> None:
    """Stop the processes and remove the directories of throwaway clusters whose owner
    died without stopping them (killed outright): their directory names the owner's PID."""
    for d in Path(tempfile.gettempdir()).glob(f"{_PREFIX}*-*"):
        pid = d.name[len(_PREFIX) :].split("-")[0]
        with contextlib.suppress(OSError):
            if d.lstat().st_uid != os.geteuid() or not pid.isdigit():
                continue
            if not psutil.pid_exists(int(pid)):
                kill_marked(str(d.resolve()), str(d.resolve() / "slurm.conf"))
                shutil.rmtree(d, ignore_errors=True)


def main() -> int:
    """``python -m perflab.batch.slurm``: start a cluster, print its environment, wait for
    Ctrl-C (or SIGTERM) and tear it down."""
    cluster = SlurmCluster()

    def on_signal(signum: int, frame: FrameType | None) -> None:
        raise KeyboardInterrupt

    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, on_signal)
    try:
        cluster.start()
        print(f"export SLURM_CONF={cluster.conf}", flush=True)
        print(
            f"# throwaway Slurm: partition {cluster.partition}, node {cluster.node} "
            f"({cluster.cpus} CPUs), controller 127.0.0.1:{cluster.ctld_port}, files in "
            f"{cluster.root}; Ctrl-C stops it",
            flush=True,
        )
        while all(p.poll() is None for p in cluster.procs.values()):
            time.sleep(1)
        print("perflab: a Slurm daemon exited; stopping the cluster", flush=True)
        return 1
    except KeyboardInterrupt:
        return 0
    except PerflabError as exc:
        print(f"perflab: {exc}", flush=True)
        return 2
    finally:
        cluster.stop()


if __name__ == "__main__":
    raise SystemExit(main())
