"""``io``: each task writes ``kib`` KiB to a file, as many tiny unbuffered writes or aggregated.

Many tiny writes and their fix: ``chunk`` bytes per ``write`` call straight to the file
descriptor (no buffer), or, with ``aggregate=1``, the same bytes gathered in memory and written
in one call. The files go to the run directory (``PERFLAB_RUN_DIR``), one per worker process.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from typing import Any

from perflab.options import Opt
from perflab.workloads import WORKLOADS
from perflab.workloads.base import Workload

IO_RESULT = 7


def io_task(total: int, chunk: int, aggregate: bool) -> int:
    folder = os.path.join(os.environ.get("PERFLAB_RUN_DIR") or tempfile.gettempdir(), "io")
    os.makedirs(folder, exist_ok=True)
    fd = os.open(os.path.join(folder, f"{os.getpid()}.dat"), os.O_WRONLY | os.O_CREAT | os.O_APPEND)
    try:
        piece = b"x" * chunk
        if aggregate:
            os.write(fd, piece * (total // chunk) + piece[: total % chunk])
        else:
            for _ in range(total // chunk):
                os.write(fd, piece)
            if total % chunk:
                os.write(fd, piece[: total % chunk])
    finally:
        os.close(fd)
    return IO_RESULT


@WORKLOADS.register
class Io(Workload):
    """Writes ``kib`` KiB per task in ``chunk``-byte unbuffered writes, or at once
    (``aggregate``)."""

    name = "io"
    params = {
        "kib": Opt(default=64, help="KiB each task writes."),
        "chunk": Opt(int, lo=1, default=64, help="Bytes per write call (unbuffered)."),
        "aggregate": Opt(choices=(0, 1), default=0, help="1: gather in memory, write once."),
    }

    def function(self) -> Callable[..., Any]:
        return io_task

    def args(self) -> tuple[Any, ...]:
        return (int(self.p["kib"]) * 1024, max(1, int(self.p["chunk"])), bool(self.p["aggregate"]))

    def check(self, result: Any) -> bool:
        return bool(result == IO_RESULT)

    def details(self, results: list[Any], wall_s: float, slots: int) -> dict[str, Any]:
        # The cost is the I/O itself (no work model, so no ideal time): the record's
        # write_bytes should show at least these bytes.
        return {"bytes_written_by_tasks": len(results) * int(self.p["kib"]) * 1024}
