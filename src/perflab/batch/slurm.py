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

With ``nodes=N`` the cluster has N nodes, each a slurmd in its own network, UTS and mount
namespaces (``batch.netns``: hostname ``node<i>``, an address on a private bridge that
slurmctld is bound to); ``kill_node``/``start_node`` crash and revive one,
``stop_controller``/``start_controller`` restart the controller. Needs root.

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
import socket
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

import psutil

from perflab import files
from perflab.batch import netns
from perflab.batch.netns import Network
from perflab.batch.procs import LIVE, MARKER, kill_marked, marked, stop_on_sigterm, stop_tree
from perflab.errors import PerflabError

#: Seconds the daemons get to come up (slurmd registering with the controller included).
START_TIMEOUT_S = 30.0
#: The Debian packages that provide the daemons and commands (scripts/setup installs them).
PACKAGES = "slurmctld slurmd slurm-client munge"
_PREFIX = "perflab-slurm-"
__all__ = ["MARKER", "SlurmCluster", "marked", "sweep_dead_clusters"]


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
        nodes: int = 0,
    ) -> None:
        self._made_root = root is None
        base = Path(root) if root else Path(tempfile.mkdtemp(prefix=f"{_PREFIX}{os.getpid()}-"))
        self.root = files.private_dir(base)
        self.partition, self.node = partition, node
        #: a partition of the same nodes whose jobs preempt (cancel) ``partition``'s
        self.urgent = f"{partition}-urgent"
        self.cpus = cpus or os.cpu_count() or 1
        #: nodes > 0: that many slurmds, each in its own namespaces on a private bridge
        self.net = Network(nodes) if nodes > 0 else None
        #: the node names, and the address each listens on (the controller's: ``addr``)
        self.nodes = [f"node{i}" for i in range(1, nodes + 1)] if nodes > 0 else [node]
        self.addr = self.net.host_addr if self.net else "127.0.0.1"
        self.node_addrs = self.net.addrs if self.net else ["127.0.0.1"]
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
        stop_on_sigterm(self)
        try:
            if self.net is not None:
                self.net.up()
            self._start_munged()
            self._write_conf()
            self.start_controller()
            for name in self.nodes:
                self.start_node(name, wait=False)
            for name in self.nodes:
                self._wait(lambda n=name: self._node_ready(n), self._slurmd(name))
        except BaseException:
            self.stop()
            raise

    def _slurmd(self, node: str) -> str:
        return "slurmd" if self.net is None else f"slurmd-{node}"

    def start_controller(self) -> None:
        """Start slurmctld (again: it recovers its state, jobs included, from its files)."""
        argv = [binary("slurmctld"), "-D", "-i", "-f", str(self.conf)]
        if self.net is not None:  # it binds to its host name's address: the bridge's
            argv = netns.with_hosts(str(self.root / "hosts"), argv)
        self._spawn("slurmctld", argv)
        self._wait(lambda: _port_open(self.ctld_port, self.addr), "slurmctld")

    def stop_controller(self) -> None:
        """Stop slurmctld by PID (the nodes and their jobs go on without it)."""
        proc = self.procs.pop("slurmctld")
        stop_tree(proc.pid)
        proc.wait(timeout=10)

    def start_node(self, node: str, wait: bool = True) -> None:
        """Start (or restart, after ``kill_node``) the slurmd of ``node``."""
        spool = self.root / "spool" / node if self.net else self.root / "spool"
        spool.mkdir(mode=0o700, parents=True, exist_ok=True)
        argv = [binary("slurmd"), "-D", "-N", node, "-f", str(self.conf)]
        if self.net is not None:
            i = self.nodes.index(node) + 1
            argv = self.net.node_argv(i, node, str(self.root / "hosts"), argv)
        self._spawn(self._slurmd(node), argv)
        if wait:
            self._wait(lambda: self._node_ready(node), self._slurmd(node))

    def kill_node(self, node: str) -> list[int]:
        """A node's crash: SIGKILL its slurmd and every process in its namespaces (the
        job's step daemon, the worker, the measured run); returns their PIDs."""
        if self.net is None:
            raise PerflabError("kill_node needs a multi-node cluster (nodes >= 1)")
        pids = self.net.kill_node(self.nodes.index(node) + 1)
        proc = self.procs.pop(self._slurmd(node), None)
        if proc is not None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=5)
        return pids

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
            f"SlurmctldHost={socket.gethostname().split('.')[0]}({self.addr})",
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
            f"SlurmdSpoolDir={r / 'spool'}" + ("/%n" if self.net else ""),
            f"SlurmctldPidFile={r / 'slurmctld.pid'}",
            f"SlurmdPidFile={r / 'slurmd.pid'}"
            if not self.net
            else f"SlurmdPidFile={r}/slurmd-%n.pid",
            f"SlurmctldLogFile={r / 'slurmctld.log'}",
            f"SlurmdLogFile={r / 'slurmd.log'}"
            if not self.net
            else f"SlurmdLogFile={r}/slurmd-%n.log",
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
            # a node that stops answering is DOWN within seconds, its jobs NODE_FAIL (not
            # requeued: the runner reruns their runs elsewhere, once, itself)
            "SlurmdTimeout=10",
            "JobRequeue=0",
            # a job of the urgent partition cancels one of the default partition's for its node
            "PreemptType=preempt/partition_prio",
            "PreemptMode=CANCEL",
            *self._node_lines(),
            f"PartitionName={self.partition} Nodes={','.join(self.nodes)} Default=YES "
            "MaxTime=INFINITE State=UP PriorityTier=1",
            f"PartitionName={self.urgent} Nodes={','.join(self.nodes)} MaxTime=INFINITE "
            "State=UP PriorityTier=2",
        ]
        files.private_dir(r / "state")
        if self.net is not None:  # what the daemons' host names resolve to, in their eyes
            names = [f"{self.addr} {socket.gethostname()}", "127.0.0.1 localhost"]
            names += [f"{a} {n}" for n, a in zip(self.nodes, self.node_addrs, strict=True)]
            (r / "hosts").write_text("\n".join(names) + "\n")
            os.chmod(r / "hosts", 0o644)
        if self.conf.exists():
            self.conf.unlink()
        files.create_private(self.conf, "\n".join(lines) + "\n")
        # slurmd and the clients (running as other users on a real cluster) read it
        os.chmod(self.conf, 0o644)

    def _node_lines(self) -> list[str]:
        if self.net is None:
            return [
                f"NodeName={self.node} NodeAddr=127.0.0.1 NodeHostname={socket.gethostname()} "
                f"CPUs={self.cpus} State=UNKNOWN"
            ]
        # every namespace node sees this machine's CPUs; one job per node is the unit
        return [
            f"NodeName={n} NodeAddr={a} NodeHostname={n} CPUs={self.cpus} State=UNKNOWN"
            for n, a in zip(self.nodes, self.node_addrs, strict=True)
        ]

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

    def _node_ready(self, node: str) -> bool:
        out = self.run("sinfo", "-h", "-n", node, "-o", "%T", check=False)
        # a revived node may be given a waiting job at once: allocated is up too
        up = ("idle", "mixed", "allocated", "completing")
        return out.returncode == 0 and out.stdout.strip().rstrip("*") in up

    def log_tail(self, name: str) -> str:
        """The last lines a daemon wrote (its own log file, else its output)."""
        texts = []
        logs = [self.root / f"{name}.log", self.root / f"{name}.out"]
        for p in logs:
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
            if "slurmctld" in self.procs and self.jobs():
                self.run("scancel", *self.jobs(), check=False)
                deadline = time.monotonic() + 10
                while self.jobs() and time.monotonic() < deadline:
                    time.sleep(0.2)
        last = ("slurmctld", "munged")
        for name in [*(n for n in self.procs if n not in last), *last]:
            proc = self.procs.get(name)
            if proc is not None:
                stop_tree(proc.pid)
                with contextlib.suppress(subprocess.TimeoutExpired):
                    proc.wait(timeout=5)
        kill_marked(str(self.root), str(self.conf))
        if self.net is not None:
            self.net.down()
        with contextlib.suppress(Exception):
            atexit.unregister(self.stop)
        if self in LIVE:
            LIVE.remove(self)
        if self._made_root:
            shutil.rmtree(self.root, ignore_errors=True)


def _port_open(port: int, addr: str = "127.0.0.1") -> bool:
    with socket.socket() as s:
        s.settimeout(0.5)
        return s.connect_ex((addr, port)) == 0


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
    if os.geteuid() == 0 and shutil.which("ip"):
        netns.sweep()  # a dead owner's namespaces (and what runs in them), veths, bridge
