"""Per-run supervisor: ``python -m perflab.run.supervisor RUN_DIR/job.json``.

It makes itself a Linux *child subreaper*, so every process the run starts stays its
descendant even when a task system detaches it (Parsl's LocalProvider starts workers with
``setpgrp``, out of the run's process group).  That gives three things:

* exact CPU accounting: orphans are reaped here, so their user/sys time lands in this
  process's ``RUSAGE_CHILDREN``; live processes are read through psutil;
* complete cleanup: on timeout every descendant is sent SIGTERM, then SIGKILL;
* a list of the processes that outlived the run's main process.

The supervisor's own polling is not in the measured tree.
"""

from __future__ import annotations

import ctypes
import json
import os
import resource
import select
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import psutil

from perflab.files import atomic_write
from perflab.run import isolate, teardown
from perflab.run.procscan import Cadence, descendants

#: Names the pipe fds ("event_w,ack_r") on which the child marks its counted windows.
EVENT_FDS_ENV = "PERFLAB_EVENT_FDS"
PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36
#: Seconds the run's leftover processes get to exit by themselves after the main one did.
LINGER_S = 3.0
#: Seconds between SIGTERM and SIGKILL.
TERM_GRACE_S = 2.0


def _prctl(option: int, arg: int) -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(option, arg, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), f"prctl({option}) failed")


def _thread_ctx_switches(pid: int) -> int:
    """Context switches of all live threads (psutil reads only the main thread's)."""
    total = 0
    try:
        for tid in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{tid}/status") as f:
                for line in f:
                    if line.startswith(("voluntary_ctxt_switches", "nonvoluntary_ctxt_switches")):
                        total += int(line.split()[1])
    except OSError:
        pass
    return total


class Tree:
    """The supervisor's descendants, with reaping and counters."""

    def __init__(self, main_pid: int) -> None:
        self.me = psutil.Process()
        self.main_pid = main_pid
        self.main_status: int | None = None
        #: Every process seen in the tree: pid -> create time (pids are reused).
        self.seen: dict[int, float] = {}
        self._known: dict[tuple[int, int], psutil.Process] = {}

    def procs(self) -> list[psutil.Process]:
        """Every live descendant, found by one pass over /proc (the run's tree may have
        detached itself from our process group, never from our subreaper ancestry)."""
        known: dict[tuple[int, int], psutil.Process] = {}
        for key in descendants(self.me.pid):
            # keyed by pid and start time: a reused pid is a new process
            p = self._known.get(key)
            if p is None:
                try:
                    p = psutil.Process(key[0])
                    self.seen[p.pid] = p.create_time()
                except psutil.Error:
                    continue
            known[key] = p
        self._known = known
        return list(known.values())

    def rss(self, rescan: bool) -> float:
        """The tree's summed RSS: of a fresh scan, or (cheaper) of the processes the last
        scan found."""
        procs = self.procs() if rescan else list(self._known.values())
        total = 0.0
        for p in procs:
            try:
                total += p.memory_info().rss
            except psutil.Error:
                continue
        return total

    def reap(self) -> None:
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            if pid == self.main_pid:
                self.main_status = status

    def counters(
        self, detail: bool = True, procs: list[psutil.Process] | None = None
    ) -> dict[str, float]:
        """Cumulative CPU, context switches and bytes written by the whole tree so far.

        Dead processes are counted through whoever reaped them (``children_*`` of a live
        parent, or our RUSAGE_CHILDREN); live ones through /proc.
        """
        ru = resource.getrusage(resource.RUSAGE_CHILDREN)
        c = {
            "t": time.monotonic(),
            "user": ru.ru_utime,
            "sys": ru.ru_stime,
            "ctx": float(ru.ru_nvcsw + ru.ru_nivcsw),
            "write_bytes": ru.ru_oublock * 512.0,
            "rss": 0.0,
            "procs": 0.0,
        }
        for p in self.procs() if procs is None else procs:
            try:
                with p.oneshot():
                    ct = p.cpu_times()
                    c["user"] += ct.user + ct.children_user
                    c["sys"] += ct.system + ct.children_system
                    c["rss"] += p.memory_info().rss
                    self.seen[p.pid] = p.create_time()
                    if detail:
                        c["write_bytes"] += p.io_counters().write_bytes
                        c["ctx"] += _thread_ctx_switches(p.pid)
                    c["procs"] += 1
            except psutil.Error:
                continue
        return c

    def describe(self, procs: list[psutil.Process]) -> list[dict[str, Any]]:
        out = []
        for p in procs:
            try:
                out.append({"pid": p.pid, "name": p.name(), "cmdline": " ".join(p.cmdline())[:300]})
            except psutil.Error:
                continue
        return out

    def facts(self, procs: list[psutil.Process] | None = None) -> list[dict[str, Any]]:
        """Each live process's title, CPU affinity and nice value (to verify treatments)."""
        out = []
        for p in self.procs() if procs is None else procs:
            try:
                with p.oneshot():
                    out.append(
                        {
                            "pid": p.pid,
                            "cmdline": " ".join(p.cmdline())[:300],
                            "affinity": p.cpu_affinity(),
                            "nice": p.nice(),
                        }
                    )
            except psutil.Error:
                continue
        return out

    def kill_all(self, grace_s: float) -> list[dict[str, Any]]:
        """SIGTERM every descendant, SIGKILL what is left after ``grace_s``; reap everything.

        Returns the processes that survived even SIGKILL (should be none).
        """
        signalled: set[int] = set()
        for sig, wait_s in ((signal.SIGTERM, grace_s), (signal.SIGKILL, 5.0)):
            end = time.monotonic() + wait_s
            while True:
                self.reap()
                alive = self.procs()
                if not alive:
                    return []
                for p in alive:
                    # A process started during the kill (a respawned worker) is signalled too.
                    if sig == signal.SIGKILL or p.pid not in signalled:
                        try:
                            p.send_signal(sig)
                        except psutil.Error:
                            pass
                        signalled.add(p.pid)
                if time.monotonic() > end:
                    break
                time.sleep(0.05)
        self.reap()
        return self.describe(self.procs())


def _launch(job: dict[str, Any]) -> tuple[subprocess.Popen[bytes], int, int]:
    """Start the run's main process in its own session; with counted windows, also the
    event pipe it marks them on (returns the supervisor's ends: events in, acks out)."""
    run_dir = Path(job["run_dir"])
    pass_fds: tuple[int, ...] = ()
    ev_r = ack_w = -1
    env = dict(job["env"])
    if job.get("windows"):
        ev_r, ev_w = os.pipe()
        ack_r, ack_w = os.pipe()
        pass_fds = (ev_w, ack_r)
        env[EVENT_FDS_ENV] = f"{ev_w},{ack_r}"
    with open(run_dir / "stdout.txt", "wb") as out, open(run_dir / "stderr.txt", "wb") as err:
        proc = subprocess.Popen(
            job["argv"],
            cwd=job.get("cwd", run_dir),
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=err,
            pass_fds=pass_fds,
            start_new_session=True,
            # --isolate: joined between fork and exec, so the whole tree is born inside
            preexec_fn=(lambda: isolate.join(job["isolate"], str(run_dir / "cgroup.txt")))
            if job.get("isolate")
            else None,
        )
    for fd in pass_fds:
        os.close(fd)
    if job.get("isolate"):  # read back where the main process runs: the proof
        job["isolate_seen"] = isolate.proof(run_dir / "cgroup.txt", job["isolate"])
    return proc, ev_r, ack_w


class Watch:
    """The supervisor's loop state: counted windows, process facts, peak RSS."""

    def __init__(self, tree: Tree, ev_r: int, ack_w: int, exit_fd: int) -> None:
        self.tree, self.ev_r, self.ack_w, self.exit_fd = tree, ev_r, ack_w, exit_fd
        self.windows: dict[str, dict[str, Any]] = {}
        self.processes: list[dict[str, Any]] = []
        self.peak_rss = 0.0
        self.buf = b""
        self.watch = [ev_r] if ev_r >= 0 else []
        #: When the child said its tree may be killed (fast teardown), or None.
        self.done: float | None = None

    def events(self, timeout: float) -> None:
        """Wait up to ``timeout`` for window marks or the main process's exit; snapshot the
        tree's counters at each mark."""
        fds = self.watch + ([self.exit_fd] if self.exit_fd >= 0 else [])
        if not fds:
            time.sleep(timeout)
            return
        ready, _, _ = select.select(fds, [], [], timeout)
        if self.ev_r not in ready:
            return
        chunk = os.read(self.ev_r, 4096)
        if not chunk:
            self.watch = []
        self.buf += chunk
        while b"\n" in self.buf:
            line, self.buf = self.buf.split(b"\n", 1)
            kind, wid = line.decode().split()
            if kind == "done":  # the result is written; nothing after it is recorded
                self.done = time.time()
                os.write(self.ack_w, b"k")
                continue
            self.windows.setdefault(wid, {})[kind] = self.tree.counters()
            # At the end of a counted batch every role (pool, workers) has surely run.
            if kind == "end" and not self.processes:
                self.processes = self.tree.facts()
            os.write(self.ack_w, b"k")


def _exit_fd(pid: int) -> int:
    """A pidfd that becomes readable when ``pid`` exits, so the exit is seen at once rather
    than at the next sample (-1 where the kernel has no pidfd_open: then sampling notices)."""
    try:
        return os.pidfd_open(pid)
    except (AttributeError, OSError):
        return -1


def _wind_down(tree: Tree) -> tuple[list[dict[str, Any]], list[Any]]:
    """Kill what is left of the tree; returns (processes that outlived the main one, survivors)."""
    if tree.main_status is None:
        return [], tree.kill_all(TERM_GRACE_S)
    # Leftovers get a moment to finish their own shutdown before being called outliving.
    end = time.monotonic() + LINGER_S
    left = tree.procs()
    while left and time.monotonic() < end:
        time.sleep(0.05)
        tree.reap()
        left = tree.procs()
    outlived = tree.describe(left)
    return outlived, tree.kill_all(TERM_GRACE_S) if outlived else []


def supervise(job: dict[str, Any]) -> dict[str, Any]:
    """Run ``job["argv"]`` as a supervised tree and return what was measured of it."""
    _prctl(PR_SET_CHILD_SUBREAPER, 1)
    # If perflab itself dies, the supervisor cleans up the run instead of orphaning it.
    _prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
    aborted: list[int] = []
    signal.signal(signal.SIGTERM, lambda signum, frame: aborted.append(signum))
    signal.signal(signal.SIGINT, lambda signum, frame: aborted.append(signum))
    interval = float(job.get("sample_interval_s", 0.2))
    t_start = time.monotonic()
    clock = {"launch": time.time()}
    proc, ev_r, ack_w = _launch(job)
    tree = Tree(proc.pid)
    w = Watch(tree, ev_r, ack_w, _exit_fd(proc.pid))
    deadline = t_start + float(job["timeout_s"])
    cadence = Cadence(interval, t_start)
    timed_out = False
    while True:
        w.events(cadence.timeout(time.monotonic()))
        tree.reap()
        if tree.main_status is not None:
            break
        rescan = cadence.take(time.monotonic())
        if rescan is not None:
            w.peak_rss = max(w.peak_rss, tree.rss(rescan))
        if aborted or time.monotonic() > deadline:
            timed_out = not aborted
            break
    t_main_end = time.monotonic()
    clock["main_exit"] = time.time()
    if w.exit_fd >= 0:
        os.close(w.exit_fd)
    outlived: list[dict[str, Any]]
    if w.done is not None and tree.main_status is not None:
        # fast teardown: the child wrote its result and left; end the rest of the tree now
        outlived, survivors = [], teardown.kill_tree(tree)
    else:
        outlived, survivors = _wind_down(tree)
    # Nothing outlived the run (the usual case): the tree is empty, no need to scan again.
    left: list[psutil.Process] | None = None if outlived or tree.main_status is None else []
    total = tree.counters(procs=left)
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    status = tree.main_status
    clock["reaped"] = time.time()
    return {
        "returncode": (os.waitstatus_to_exitcode(status) if status is not None else None),
        "timed_out": timed_out,
        "aborted": bool(aborted),
        "wall_s": t_main_end - t_start,
        "windows": w.windows,
        "total": total,
        "peak_rss_bytes": int(max(w.peak_rss, ru.ru_maxrss * 1024.0)),
        "outlived": outlived,
        "survivors": survivors,
        "source": "subreaper+rusage+procfs",
        "processes": w.processes or tree.facts(left),
        "seen": [[pid, ct] for pid, ct in sorted(tree.seen.items())],
        "clock": clock,
        "killed": w.done is not None,
    }


def _isolation(job: dict[str, Any]) -> dict[str, Any]:
    """What ``--isolate`` did (nothing without it): the cgroup(s), weight and cpus, the main
    process's ``/proc/PID/cgroup`` as read back, and whether the cgroups were removed (the
    tree is gone by now: the supervisor removes them, also when perflab was killed)."""
    iso = job.get("isolate")
    if not iso:
        return {}
    removed = isolate.remove(iso)
    return {"isolation": {**iso, "proof": job.get("isolate_seen"), "removed": removed}}


def main(argv: list[str]) -> int:
    job_path = Path(argv[1])
    try:
        job = json.loads(job_path.read_text())
        result = supervise(job)
        result.update(_isolation(job))  # once the tree is gone
        atomic_write(job_path.with_name("supervisor.json"), json.dumps(result))
    except OSError as exc:
        # The caller reads this one line as the cause (a full disk, a deleted run dir).
        print(f"supervisor: {exc}", file=sys.stderr)
        return 3
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
