"""``saga``: radical.saga job services on ``fork://localhost`` or ``ssh://`` to sshds that
perflab starts on loopback ports (the job-submission table's rows 4-9 and its scaling curves).

Options: ``endpoint`` (fork | ssh), ``mode`` (create_job: ``create_job`` + ``run``;
run_job: ``js.run_job(cmd)``; bulk: one ``Container`` per service, ``container.run()``),
``services`` (job services, each driven by its own thread, as in the job-service curve),
``endpoints`` (sshd ports standing in for hosts; service i uses endpoint i mod M),
``url`` (an explicit job-service URL instead of a started endpoint, e.g. to test an
unreachable one), ``ssh_share`` (OpenSSH connection sharing: auto | no), ``until``,
``net_rtt_ms``/``net_mbit`` (endpoint=ssh: a delaying relay in front of each sshd, so each
job service talks to its "host" over that network; see ``perflab.net``).

Service start-up (2-3 s each) happens in ``start()``, outside the measured window; wrapper
state goes to the run directory (``RADICAL_BASE``), not to ``~/.radical``.

Job command lines: saga's shell adaptor pastes a description's executable and arguments
into a shell line as they are, and ``run_job(cmd)`` runs ``/bin/sh -c '<cmd>'``; each line
is then typed into saga's wrapper shell through a pty. So each word of the workload's
command is quoted (``job_words``, ``run_job_line``) and control characters, which the pty
would act on, are refused: a ``--param args=`` value is arguments, never shell code.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import signal
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, ClassVar

import psutil

from perflab.engines import ENGINES
from perflab.engines.jobs import (
    JobEngine,
    JobFailed,
    batch_result,
    check_words,
    choice,
    count,
    shares,
)
from perflab.engines.loopback import Relay, Sshd, stop_pids
from perflab.errors import PerflabError
from perflab.files import atomic_write
from perflab.net import NET_OPTIONS, net_env, resolve_net, shaped
from perflab.options import Opt
from perflab.tasks import CommandTasks

MODES = ("create_job", "run_job", "bulk")
#: Seconds saga's ssh gives a connection (RADICAL_SAGA_PTY_SSH_TIMEOUT): an unreachable
#: endpoint fails the run after this, never hangs.
SSH_TIMEOUT_S = 10
#: Seconds submitted jobs get to finish after a batch (then the run fails).
SETTLE_TIMEOUT_S = 120.0
#: Seconds the job services get to close before their processes are stopped by PID.
CLOSE_TIMEOUT_S = 10.0


#: Characters a run_job line escapes: all but those that shlex.quote leaves bare.
_SPECIAL = re.compile(r"[^\w@%+=:,./-]", re.ASCII)


def job_words(argv: list[str]) -> list[str]:
    """``argv`` as the executable and arguments of a saga job description: each one shell
    word, since saga's shell adaptor joins them into a shell line unquoted."""
    return [shlex.quote(w) for w in argv]


def run_job_line(argv: list[str]) -> str:
    """``argv`` as the command line for ``run_job``: saga runs it as ``/bin/sh -c '<line>'``
    and "escapes" a single quote in it as ``\\\\'``, which ends the quoted string instead
    (so ``shlex.join``'s quoting would break out). Every other special character is
    escaped with a backslash (saga doubles backslashes for its two ``printf %b``); a word
    holding a single quote cannot be carried and is refused."""
    for word in argv:
        if "'" in word:
            raise PerflabError(
                f"engine 'saga': mode=run_job cannot pass {word!r} (saga's run_job breaks "
                "on a single quote); use mode=create_job"
            )
    return " ".join(_SPECIAL.sub(r"\\\g<0>", w) if w else '""' for w in argv)


def _close(js: Any) -> None:
    try:
        js.close()
    except Exception:  # a broken service must not keep the others running
        pass


def _check_bulk(jobs: list[Any]) -> None:
    """A bulk submission marks the jobs it could not start FAILED, without an id (saga's
    wrapper can read an empty job id from its shared fifo under load): fail the run."""
    lost = [j for j in jobs if j.id is None]
    if lost:
        cause = " ".join(str(getattr(lost[0]._adaptor, "_exception", "") or "no job id").split())
        raise JobFailed(
            f"bulk submission: {len(lost)} of {len(jobs)} jobs got no id: {cause[:300]}"
        )


def _last_line(path: Path) -> str:
    try:
        lines = path.read_text().split()
    except OSError:
        return ""
    return lines[-1] if lines else ""


@ENGINES.register
class SagaEngine(JobEngine):
    """radical.saga job services; tasks are executables (see the module docstring)."""

    name = "saga"
    packages = ("radical.saga", "radical.utils")
    options: ClassVar[dict[str, Opt]] = {
        **JobEngine.options,
        "endpoint": Opt(
            own_check=True,
            default="fork",
            help="fork (local jobs) or ssh (through loopback sshds).",
        ),
        "mode": Opt(own_check=True, default="create_job", help="create_job, run_job or bulk."),
        "services": Opt(
            own_check=True, default=1, help="Job services, each driven by its own thread."
        ),
        "endpoints": Opt(
            own_check=True, default=1, help="sshd endpoints perflab starts (endpoint=ssh)."
        ),
        "url": Opt(own_check=True, default="", help="A job service URL instead of the endpoint's."),
        "ssh_share": Opt(
            own_check=True,
            default="auto",
            help="OpenSSH connection sharing: auto or no.",
        ),
        **NET_OPTIONS,
    }

    @classmethod
    def resolve_options(cls, options: dict[str, Any]) -> dict[str, Any]:
        m = resolve_net(cls.name, super().resolve_options(options))
        m["endpoint"] = choice(cls.name, m, "endpoint", ("fork", "ssh"))
        m["mode"] = choice(cls.name, m, "mode", MODES)
        m["ssh_share"] = choice(cls.name, m, "ssh_share", ("auto", "no"))
        m["services"] = count(cls.name, m, "services")
        m["endpoints"] = count(cls.name, m, "endpoints")
        if m["endpoints"] > 1 and (m["endpoint"] != "ssh" or m["url"]):
            raise PerflabError(
                "engine 'saga': endpoints > 1 needs endpoint=ssh (perflab starts one sshd each)"
            )
        if shaped(m) and (m["endpoint"] != "ssh" or m["url"]):
            raise PerflabError(
                "engine 'saga': net_rtt_ms/net_mbit need endpoint=ssh (the relay stands in "
                "front of the sshds perflab starts)"
            )
        return m

    def start(self) -> None:
        os.environ["RADICAL_BASE"] = str(self.run_dir / "radical")  # a mark: see _leftovers
        os.environ["RADICAL_SAGA_PTY_SSH_TIMEOUT"] = str(SSH_TIMEOUT_S)
        os.environ["RADICAL_SAGA_PTY_SSH_SHAREMODE"] = str(self.opts["ssh_share"])
        self.sshds: list[Sshd] = []
        self.relays: list[Relay] = []
        self.jobs: list[Any] = []
        if self.opts["url"]:
            urls = [str(self.opts["url"])]
        elif self.opts["endpoint"] == "fork":
            # saga's fork:// shell is ``$SHELL -i``: an interactive bash would run the user's
            # ~/.bashrc (measured, and pyenv's init there waits a minute on a stale lock);
            # sh -i reads only $ENV
            os.environ["SHELL"] = "/bin/sh"
            os.environ.pop("ENV", None)
            urls = ["fork://localhost/"]
        else:
            urls = self._start_sshds(int(self.opts["endpoints"]))
        import radical.saga as rs  # after the environment is set: saga reads it on import

        self.rs = rs
        n = int(self.opts["services"])
        self.urls = [urls[i % len(urls)] for i in range(n)]
        # what ran, for tests and post-mortems: the job-service URLs and which pty module
        # (the installed one, or a patched copy) saga imported; written before the services
        # start, so a run whose bootstrap fails still says it
        facts = {"urls": self.urls, "pty_process": rs.utils.pty_process.__file__}
        atomic_write(self.run_dir / "saga.json", json.dumps(facts))
        with ThreadPoolExecutor(max_workers=n) as pool:
            futures = [pool.submit(self._service, u) for u in self.urls]
            self.services = [f.result() for f in futures]

    def _start_sshds(self, m: int) -> list[str]:
        d = self.run_dir / "sshd"
        for _ in range(m):
            sshd = Sshd(d)
            self.sshds.append(sshd)
            sshd.start()
        os.environ["PATH"] = f"{self.sshds[0].client_bin}{os.pathsep}{os.environ['PATH']}"
        ports = [s.port for s in self.sshds]
        if shaped(self.opts):
            rtt, mbit = self.opts["net_rtt_ms"], self.opts["net_mbit"]
            for port in ports:
                relay = Relay(self.run_dir / "net", port, rtt or 0.0, mbit)
                self.relays.append(relay)
                relay.start()
            ports = [r.port for r in self.relays]
        return [f"ssh://127.0.0.1:{p}/" for p in ports]

    def _service(self, url: str) -> Any:
        try:
            return self.rs.job.Service(url)
        except Exception as exc:  # saga raises its own hierarchy; keep its message
            raise JobFailed(f"job service {url} did not start: {exc}") from None

    def _description(self, words: list[str]) -> Any:
        """A job description of ``words`` (``job_words``: already quoted)."""
        jd = self.rs.job.Description()
        jd.executable = words[0]
        jd.arguments = words[1:]
        return jd

    def _submit(self, js: Any, words: list[str], k: int, out: dict[str, Any]) -> None:
        """One service thread's share of a batch: ``k`` jobs in the engine's mode; ``words``
        is the ``run_job`` line alone in that mode, else the quoted job words."""
        jobs: list[Any] = []
        mode = self.opts["mode"]
        if mode == "bulk":
            container = self.rs.job.Container()
            for _ in range(k):
                container.add(js.create_job(self._description(words)))
            container.run()
            jobs = list(container.get_tasks())
            _check_bulk(jobs)
        else:
            for _ in range(k):
                if mode == "run_job":
                    jobs.append(js.run_job(words[0]))
                else:
                    job = js.create_job(self._description(words))
                    job.run()
                    jobs.append(job)
                out.setdefault("first", time.perf_counter())
        out["first"] = out.get("first", time.perf_counter())
        out["submitted"] = time.perf_counter()
        if self.opts["until"] == "done":
            self._wait(jobs)
        out["jobs"] = jobs
        out["end"] = time.perf_counter()

    def run_batch(self, tasks: CommandTasks, n: int) -> dict[str, Any]:
        argv = tasks.command()
        assert argv is not None
        check_words(self.name, argv, "saga types each job into a terminal, which acts on it")
        # quoted once, before the window opens
        words = [run_job_line(argv)] if self.opts["mode"] == "run_job" else job_words(argv)
        outs: list[dict[str, Any]] = [{} for _ in self.services]
        errors: list[BaseException] = []

        def work(i: int, k: int) -> None:
            try:
                self._submit(self.services[i], words, k, outs[i])
            except BaseException as exc:  # reported below, with the service's URL
                errors.append(JobFailed(f"{self.urls[i]}: {exc}"))

        threads = [
            threading.Thread(target=work, args=(i, k))
            for i, k in enumerate(shares(n, len(self.services)))
            if k
        ]
        t0 = time.perf_counter()
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        if errors:
            raise errors[0]
        used = [o for o in outs if o]
        self.jobs = [j for o in used for j in o["jobs"]]
        return batch_result(
            n,
            t0,
            max(o["submitted"] for o in used),
            min(o["first"] for o in used),
            max(o["end"] for o in used),
        )

    def _wait(self, jobs: list[Any]) -> None:
        for job in jobs:
            job.wait()
        failed = [j for j in jobs if j.state != self.rs.job.DONE]
        if failed:
            j = failed[0]
            raise JobFailed(
                f"{len(failed)} of {len(jobs)} jobs did not finish DONE "
                f"(job {j.id}: {j.state}, exit code {j.exit_code})"
            )

    def settle(self) -> None:
        """Wait for the batch's jobs through their wrapper state files (every endpoint is
        on this machine): asking saga would cost a round trip per job."""
        jobs, self.jobs = self.jobs, []
        base = self.run_dir / "radical" / ".radical" / "saga" / "adaptors" / "shell_job"
        dirs = {j.id: base / j.id.rsplit("-[", 1)[-1].rstrip("]") for j in jobs}
        deadline = time.monotonic() + SETTLE_TIMEOUT_S
        while dirs:
            for jid, d in list(dirs.items()):
                state = _last_line(d / "state")
                if state in ("DONE", "FAILED", "CANCELED"):
                    if state != "DONE":
                        code = _last_line(d / "exit")
                        raise JobFailed(f"job {jid} ended {state} (exit code {code})")
                    del dirs[jid]
            if dirs and time.monotonic() > deadline:
                raise JobFailed(
                    f"{len(dirs)} jobs not finished {SETTLE_TIMEOUT_S:g}s after submission"
                )
            if dirs:
                time.sleep(0.05)

    def shutdown(self) -> None:
        # close() can block on a wedged pty shell: give all services CLOSE_TIMEOUT_S, then
        # stop what is left by PID below
        closers = [
            threading.Thread(target=_close, args=(js,), daemon=True)
            for js in getattr(self, "services", [])
        ]
        for t in closers:
            t.start()
        deadline = time.monotonic() + CLOSE_TIMEOUT_S
        for t in closers:
            t.join(timeout=max(0.0, deadline - time.monotonic()))
        for server in [*getattr(self, "relays", []), *getattr(self, "sshds", [])]:
            server.stop()
        # saga's pty shells (and, over ssh, the ssh clients) are this process's children
        try:
            kids = [c.pid for c in psutil.Process().children(recursive=True)]
        except psutil.Error:
            kids = []
        stop_pids(kids, first=signal.SIGHUP)
        stop_pids(self._leftovers())

    def record_env(self) -> dict[str, Any]:
        return {"net": net_env(self.opts)} if self.opts["endpoint"] == "ssh" else {}

    def _leftovers(self) -> list[int]:
        """This user's processes that still carry this run's marks in their environment:
        saga's wrapper double-forks its idle checker (a ``sleep``) and its job monitors, so
        neither the walk over sshd's descendants nor the one over ours reaches them; they
        would outlive the run (or keep a close() waiting). Marks: the sshd directory (sshd
        sets it in every session) and, for fork://, this run's RADICAL_BASE."""
        marks = {("PERFLAB_SSHD_DIR", str(s.workdir)) for s in getattr(self, "sshds", [])}
        marks.add(("RADICAL_BASE", str(self.run_dir / "radical")))  # as start() sets it
        uid, me, pids = os.getuid(), os.getpid(), []
        for p in psutil.process_iter(["uids", "environ"]):
            env, uids = p.info["environ"] or {}, p.info["uids"]
            # another user's process is never ours to stop, whatever its environment says
            if p.pid == me or uids is None or uids.real != uid:
                continue
            if any(env.get(name) == value for name, value in marks):
                pids.append(p.pid)
        return pids
