"""The processes of a throwaway Slurm: stopped by PID, found by the marker in their
environment (step daemons detach from slurmd, but inherit it)."""

from __future__ import annotations

import contextlib
import os
import signal
import threading
from types import FrameType
from typing import Any

import psutil

#: The environment variable that marks every process of one throwaway cluster.
MARKER = "PERFLAB_SLURM_DIR"


def stop_tree(pid: int, grace_s: float = 3.0) -> None:
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


#: Clusters of this process that SIGTERM must stop (atexit does not run on a signal).
LIVE: list[Any] = []


def stop_on_sigterm(cluster: Any) -> None:
    """Stop ``cluster`` if this process gets SIGTERM while SIGTERM would otherwise just end it
    (Python's default): then die of SIGTERM as before. A handler someone else installed
    (a CLI's, the script's) is left alone; it ends in atexit."""
    LIVE.append(cluster)
    if threading.current_thread() is not threading.main_thread():
        return
    if signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL:
        return

    def on_term(signum: int, frame: FrameType | None) -> None:
        for c in list(LIVE):
            c.stop()
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGTERM)

    signal.signal(signal.SIGTERM, on_term)
