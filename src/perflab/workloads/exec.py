"""``exec``: any executable as the task, for job engines (shell, saga) — e.g.
``/bin/sleep 1`` or ``/bin/date``."""

from __future__ import annotations

import os
import shlex
import shutil
from collections.abc import Callable
from typing import Any

from perflab.errors import PerflabError
from perflab.options import Opt
from perflab.workloads import WORKLOADS
from perflab.workloads.base import Workload


def resolve_executable(name: str, workload: str) -> str:
    """``name`` as an absolute path to an executable file, or PerflabError naming it."""
    path = shutil.which(name) if "/" not in name else name
    if not path or not os.path.isfile(path) or not os.access(path, os.X_OK):
        raise PerflabError(
            f"workload {workload!r}: executable {name!r} not found or not executable"
        )
    return os.path.abspath(path)


@WORKLOADS.register
class Exec(Workload):
    """Runs ``executable`` with ``args`` (a shell-quoted string) as each job."""

    name = "exec"
    params = {
        "executable": Opt(default="/bin/true", help="The program each task runs."),
        "args": Opt(default="", help="Its arguments (split like a shell, no shell run)."),
    }

    def function(self) -> Callable[..., Any]:
        raise PerflabError("workload 'exec' runs on job engines only (shell, saga)")

    def command(self) -> list[str]:
        exe = resolve_executable(str(self.p["executable"]), self.name)
        try:
            args = shlex.split(str(self.p["args"]))
        except ValueError as exc:
            raise PerflabError(f"workload 'exec': args {self.p['args']!r}: {exc}") from None
        return [exe, *args]
