"""A compute kernel of known size: a counted loop, calibrated once per run.

A loop of fixed iterations (not "spin until a deadline") keeps the work constant whoever
holds the core: under contention or a GIL the task takes longer, as real work would, so
efficiency = ideal ÷ measured stays honest.  Two kinds:

* ``hash`` (default): SHA-256 of a 4 KiB block per iteration.  hashlib releases the GIL for
  inputs over 2 KiB, so threads compute in parallel, as NumPy-style work does.
* ``spin``: an empty Python loop, holding the GIL: thread engines cannot exceed one core.
"""

from __future__ import annotations

import hashlib
import time
from typing import Any

from perflab.errors import PerflabError
from perflab.options import Opt
from perflab.workloads.base import Workload

KINDS = ("hash", "spin")
BLOCK = b"\x5a" * 4096
#: Calibration work per trial, in iterations of each kind (~5-10 ms on a current core).
CALIBRATION_ITERS = {"hash": 1_000, "spin": 200_000}
#: Best of 15 short trials: on a shared machine a trial fits in one time slice, so the best
#: of many sees the core's own speed (5 trials under load 10 underestimated it up to 1.4×,
#: and efficiency on the peak basis then exceeded 1).
CALIBRATION_TRIALS = 15


def spin(iters: int, kind: str = "hash") -> None:
    if kind == "hash":
        h = hashlib.sha256
        for _ in range(iters):
            h(BLOCK)
    else:
        for _ in range(iters):
            pass


def check_kind(kind: str, workload: str) -> str:
    if kind not in KINDS:
        raise PerflabError(
            f"workload {workload!r}: kernel {kind!r} is not one of {', '.join(KINDS)}"
        )
    return kind


def calibrate(kind: str = "hash") -> float:
    """Iterations per second of :func:`spin` on one core: the best of a few trials (the
    peak, as Task Bench measures its kernels' peak)."""
    n = CALIBRATION_ITERS[kind]
    best = 0.0
    for _ in range(CALIBRATION_TRIALS):
        t0 = time.perf_counter()
        spin(n, kind)
        best = max(best, n / (time.perf_counter() - t0))
    return best


#: The ``task_us`` parameter of the kernel workloads.
TASK_US_HELP = "Each task's kernel work (µs at the calibrated rate)."
#: The ``kernel`` parameter of the kernel workloads.
KERNEL_OPT = Opt(choices=KINDS, default="hash", help="The busy loop: hash (sha256) or spin.")


class KernelWorkload(Workload):
    """A workload whose tasks run a counted kernel for ``task_us``: the kernel is checked with
    the parameters and calibrated once per run in the measured process (``prepare``)."""

    rate: float = 0.0

    @classmethod
    def resolve_params(cls, params: dict[str, Any]) -> dict[str, Any]:
        merged = super().resolve_params(params)
        check_kind(str(merged["kernel"]), cls.name)
        return merged

    def prepare(self) -> None:
        self.rate = calibrate(str(self.p["kernel"]))

    def iters(self) -> int:
        return max(0, round(float(self.p["task_us"]) * 1e-6 * self.rate))
