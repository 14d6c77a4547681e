"""``shell``: background jobs of one long-lived shell, the job-submission table's floor (rows 1, 2).

``mode=raw`` feeds ``/bin/sh`` lines like ``{ CMD; echo D 7 $?; } & echo S 7 $!`` — a
plain ``/bin/sleep 1 &`` plus the pid echo that confirms the fork. ``mode=wrapper`` feeds
perflab's job wrapper (``shell_wrapper.sh``), which keeps each job's pid, state and exit
code on disk and waits for each job's monitor before taking the next request, as
radical.saga's shell wrapper does. Requests are streamed without waiting for replies; a
reader thread matches the replies (``S seq pid``, ``D seq rc``) to the jobs.

``endpoint=ssh`` pipes the same shell through ssh to an sshd perflab starts on loopback (the
table's row 3, "RUN … @ host"), and ``net_rtt_ms``/``net_mbit`` put a delaying relay in front
of that sshd (``perflab.net``).
"""

from __future__ import annotations

import shlex
import subprocess
import threading
import time
from pathlib import Path
from typing import IO, Any, ClassVar

from perflab.engines import ENGINES
from perflab.engines.jobs import JobEngine, JobFailed, batch_result, check_words, choice
from perflab.engines.loopback import Relay, Sshd, stop_pids
from perflab.errors import PerflabError
from perflab.net import NET_OPTIONS, net_env, resolve_net, shaped
from perflab.options import Opt
from perflab.tasks import CommandTasks

WRAPPER = Path(__file__).with_name("shell_wrapper.sh")
#: Seconds the engine waits for the shell to confirm or finish jobs before failing the run.
REPLY_TIMEOUT_S = 120.0


@ENGINES.register
class ShellEngine(JobEngine):
    """Jobs as background processes of one shell (raw) or of a state-keeping wrapper."""

    name = "shell"
    options: ClassVar[dict[str, Opt]] = {
        **JobEngine.options,
        "mode": Opt(
            own_check=True,
            default="raw",
            help="raw: one shell per job; wrapper: one shell that reads jobs as lines.",
        ),
        "endpoint": Opt(
            own_check=True, default="local", help="local, or ssh: the shell behind a loopback sshd."
        ),
        **NET_OPTIONS,
    }

    @classmethod
    def resolve_options(cls, options: dict[str, Any]) -> dict[str, Any]:
        merged = resolve_net(cls.name, super().resolve_options(options))
        merged["mode"] = choice(cls.name, merged, "mode", ("raw", "wrapper"))
        merged["endpoint"] = choice(cls.name, merged, "endpoint", ("local", "ssh"))
        if shaped(merged) and merged["endpoint"] != "ssh":
            raise PerflabError(
                "engine 'shell': net_rtt_ms/net_mbit need endpoint=ssh (the relay stands in "
                "front of the sshd perflab starts)"
            )
        return merged

    def start(self) -> None:
        self.mode = self.opts["mode"]
        argv = (
            ["/bin/sh"]
            if self.mode == "raw"
            else ["/bin/sh", str(WRAPPER), str(self.run_dir / "jobs")]
        )
        self.servers: list[Sshd | Relay] = []
        if self.opts["endpoint"] == "ssh":
            argv = self._over_ssh(argv)
        self.proc = subprocess.Popen(
            argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1 << 16
        )
        self.cond = threading.Condition()
        self.started: dict[int, float] = {}
        self.done: dict[int, int] = {}
        self.seq = 0
        self.reader = threading.Thread(target=self._read, args=(self.proc.stdout,), daemon=True)
        self.reader.start()

    def _over_ssh(self, argv: list[str]) -> list[str]:
        """``argv`` run by an sshd of this run's (behind a relay when the options ask for a
        network), its stdin and stdout piped through ssh; the servers started now."""
        sshd = Sshd(self.run_dir / "sshd")
        self.servers.append(sshd)
        sshd.start()
        port = sshd.port
        if shaped(self.opts):
            rtt, mbit = self.opts["net_rtt_ms"], self.opts["net_mbit"]
            relay = Relay(self.run_dir / "net", port, rtt or 0.0, mbit)
            self.servers.append(relay)
            relay.start()
            port = relay.port
        ssh = str(sshd.client_bin / "ssh")
        return [ssh, "-p", str(port), "-o", "ControlMaster=no", "127.0.0.1", shlex.join(argv)]

    def record_env(self) -> dict[str, Any]:
        return {"net": net_env(self.opts)} if self.opts["endpoint"] == "ssh" else {}

    def _read(self, out: IO[str] | None) -> None:
        assert out is not None
        for line in out:
            kind, seq, value = (line.split() + ["", "", ""])[:3]
            with self.cond:
                if kind == "S":
                    self.started[int(seq)] = time.perf_counter()
                elif kind == "D":
                    self.done[int(seq)] = int(value)
                self.cond.notify_all()
        with self.cond:
            self.cond.notify_all()

    def _request(self, seq: int, cmd: str) -> str:
        if self.mode == "raw":
            return f"{{ {cmd} </dev/null >/dev/null 2>&1; echo D {seq} $?; }} & echo S {seq} $!\n"
        return f"RUN {seq} {cmd}\n"

    def _wait_for(self, seqs: range, table: dict[int, Any], what: str) -> None:
        deadline = time.monotonic() + REPLY_TIMEOUT_S
        with self.cond:
            while not all(s in table for s in seqs):
                if self.proc.poll() is not None:
                    raise JobFailed(f"the {self.mode} shell exited ({self.proc.returncode})")
                if time.monotonic() > deadline:
                    raise JobFailed(f"jobs not {what} after {REPLY_TIMEOUT_S:g}s")
                self.cond.wait(0.5)

    def run_batch(self, tasks: CommandTasks, n: int) -> dict[str, Any]:
        argv = tasks.command()
        assert argv is not None
        if self.mode == "wrapper":  # the raw shell parses a quoted newline as part of a word
            check_words(self.name, argv, "the wrapper reads one job per line")
        cmd = shlex.join(argv)
        seqs = range(self.seq, self.seq + n)
        self.seq += n
        assert self.proc.stdin is not None
        t0 = time.perf_counter()
        for s in seqs:
            self.proc.stdin.write(self._request(s, cmd))
        self.proc.stdin.flush()
        submitted = time.perf_counter()
        self._wait_for(seqs, self.started, "started")
        if self.opts["until"] == "done":
            self._wait_for(seqs, self.done, "finished")
        end = time.perf_counter()
        self.pending = seqs
        with self.cond:
            first = min(self.started[s] for s in seqs)
        return batch_result(n, t0, submitted, first, end)

    def settle(self) -> None:
        seqs = getattr(self, "pending", range(0))
        self._wait_for(seqs, self.done, "finished")
        failed = {s: self.done[s] for s in seqs if self.done[s] != 0}
        if failed:
            seq, rc = next(iter(failed.items()))
            raise JobFailed(f"{len(failed)} of {len(seqs)} jobs failed (job {seq}: exit {rc})")

    def shutdown(self) -> None:
        proc = getattr(self, "proc", None)
        if proc is None:
            self._stop_servers()
            return
        try:
            if proc.stdin is not None:
                proc.stdin.close()
        except OSError:
            pass
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            pass
        self._stop_servers()  # sshd's sessions (the remote shell and its jobs) with it
        # the shell's jobs and monitors (those that double-forked are reaped by the
        # supervisor) are stopped by PID
        import psutil

        try:
            kids = [c.pid for c in psutil.Process().children(recursive=True)]
        except psutil.Error:
            kids = []
        stop_pids(kids)

    def _stop_servers(self) -> None:
        for server in reversed(getattr(self, "servers", [])):
            server.stop()
