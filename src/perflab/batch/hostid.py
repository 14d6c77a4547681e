"""Which physical machine (kernel boot) a process runs on, whatever its hostname says.

A node's hostname is what its UTS namespace, container or admin says; the boot id is the
running kernel's (``/proc/sys/kernel/random/boot_id``, new at each boot, one per kernel:
every container and namespace of one machine shares it) and the machine id is the OS
install's (``/etc/machine-id``). Two runs with the same boot id ran on one kernel, hence one
machine, whatever their hostnames were.
"""

from __future__ import annotations

import contextlib
import platform

BOOT_ID = "/proc/sys/kernel/random/boot_id"
MACHINE_ID = "/etc/machine-id"


def _read(path: str) -> str | None:
    with contextlib.suppress(OSError):
        return open(path).read().strip() or None  # noqa: SIM115
    return None


def host_identity() -> dict[str, str | None]:
    """``boot_id``, ``machine_id`` (None where unreadable) and ``hostname`` of this process."""
    return {
        "boot_id": _read(BOOT_ID),
        "machine_id": _read(MACHINE_ID),
        "hostname": platform.node(),
    }
