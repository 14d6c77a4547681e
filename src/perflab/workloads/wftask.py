"""The workflow task (``wfcommons``): read inputs, run the kernel, write outputs.

A module of its own, importing no more than the kernel: an engine that starts a process per
task (Work Queue) imports it for every task, and the workload's own module brings numpy and
the generator.
"""

from __future__ import annotations

import os
import time

from perflab.workloads.kernel import spin

CHUNK = 1 << 20
#: Slack (s) for "a child started before its parent ended" (one host, one clock).
ORDER_SLACK_S = 1e-3


def write_file(path: str, size: int) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    try:
        block = b"\0" * min(size, CHUNK)
        left = size
        while left > 0:
            left -= os.write(fd, block[: min(left, CHUNK)])
    finally:
        os.close(fd)


def _read(path: str, size: int) -> None:
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    try:
        got = 0
        while chunk := os.read(fd, CHUNK):
            got += len(chunk)
    finally:
        os.close(fd)
    if got != size:
        raise RuntimeError(f"workflow file {path} has {got} bytes, expected {size}")


def wf_task(
    i: int,
    iters: int,
    kind: str,
    root: str,
    reads: tuple[tuple[str, int], ...],
    writes: tuple[tuple[str, int], ...],
    *parents: tuple[int, float, float],
) -> tuple[int, float, float]:
    """One workflow task: read, compute, write. Returns (index, start, end) (wall clock)."""
    start = time.time()
    late = [p for p in parents if p[2] > start + ORDER_SLACK_S]
    if late:
        raise RuntimeError(f"workflow task {i} started before its parent {late[0][0]} ended")
    for name, size in reads:
        _read(os.path.join(root, name), size)
    spin(iters, kind)
    for name, size in writes:
        write_file(os.path.join(root, name), size)
    return i, start, time.time()
