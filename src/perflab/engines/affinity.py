"""An 8-thread CPU affinity scheme for HTEX roles, scaled to the cores present.

On 8 hardware threads: workers 0-3 (one each), pool manager 4, interchange 5,
submit side 6-7.  On n cores, thread i of the 8 maps to core floor(i * n / 8), so each role keeps
its share of the machine (2 cores: workers on 0; manager, interchange, submit side on 1).
Parsl's workers inherit the pool manager's mask and pin themselves within it, so the manager
process itself runs on its cores *and* the workers'.
"""

from __future__ import annotations

SEED_THREADS = 8
SEED_ROLES = {
    "workers": range(0, 4),
    "manager": range(4, 5),
    "interchange": range(5, 6),
    "submit": range(6, 8),
}


def role_cores(n_cores: int) -> dict[str, list[int]]:
    return {
        role: sorted({i * n_cores // SEED_THREADS for i in threads})
        for role, threads in SEED_ROLES.items()
    }


def cpu_list(cores: list[int]) -> str:
    return ",".join(map(str, cores))


def worker_affinity(n_workers: int, cores: list[int]) -> str:
    """HTEX ``cpu_affinity`` value pinning worker k to one core, cycling over ``cores``."""
    return "list:" + ":".join(str(cores[k % len(cores)]) for k in range(n_workers))
