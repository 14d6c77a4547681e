"""Play the other local user: run Python code as uid ``nobody`` against a live perflab run.

CI runs as root, so a test can drop a subprocess to ``nobody`` -- an unprivileged local user
who shares the machine's loopback, /tmp and /dev/shm, exactly what perflab must withstand.
The venv's interpreter lives under /root (0700 here), so the attacker imports what it needs
while still root, then drops every privilege before it touches the target.
"""

from __future__ import annotations

import ipaddress
import json
import os
import subprocess
import sys
import textwrap
from typing import Any

import psutil
import pytest

NOBODY = 65534

needs_root = pytest.mark.skipif(
    os.geteuid() != 0, reason="dropping to uid nobody needs root (CI runs as root)"
)

_PRELUDE = """
import os, sys, json
{imports}
{prepare}
os.chdir("/")
os.setgroups([])
os.setgid({uid})
os.setuid({uid})
os.environ["HOME"] = "/nonexistent"
assert os.getuid() == {uid} and os.geteuid() == {uid}
def report(**kw):
    print(json.dumps(kw), flush=True)
"""


def as_nobody(
    code: str, *, preimport: tuple[str, ...] = (), prepare: str = "", timeout: float = 60
) -> dict[str, Any]:
    """Run ``code`` as uid nobody; it calls ``report(**outcome)`` once. Returns the outcome.

    ``preimport`` modules are imported while still root (the interpreter's files are not
    readable by nobody here), and ``prepare`` runs then: what he owns anyway (his own
    certificate) made with libraries that import lazily. Everything the attack does happens
    after the drop.
    """
    imports = "\n".join(f"import {m}" for m in preimport)
    script = _PRELUDE.format(imports=imports, prepare=textwrap.dedent(prepare), uid=NOBODY)
    script += textwrap.dedent(code)
    env = {k: v for k, v in os.environ.items() if not k.startswith("PERFLAB")}
    proc = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=timeout, env=env
    )
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("{")]
    if not lines:
        raise AssertionError(f"the attacker reported nothing (exit {proc.returncode}): "
                             f"{proc.stderr[-2000:]}")  # fmt: skip
    out: dict[str, Any] = json.loads(lines[-1])
    return out


def listeners(root_pid: int) -> list[tuple[str, int, int]]:
    """Every listening TCP socket of ``root_pid``'s process tree: (address, port, pid)."""
    procs = [psutil.Process(root_pid)]
    try:
        procs += procs[0].children(recursive=True)
    except psutil.Error:
        pass
    pids = {p.pid for p in procs}
    return sorted(
        (c.laddr.ip, c.laddr.port, c.pid)
        for c in psutil.net_connections(kind="tcp")
        if c.status == psutil.CONN_LISTEN and c.pid in pids
    )


def public(socks: list[tuple[str, int, int]]) -> list[tuple[str, int, int]]:
    """The listeners that are not on loopback (0.0.0.0, [::] or a real interface)."""
    return [s for s in socks if not ipaddress.ip_address(s[0].split("%")[0]).is_loopback
            and not s[0].startswith("::ffff:127.")]  # fmt: skip
