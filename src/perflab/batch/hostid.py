"""Which physical machine (kernel boot) and which node of it a process runs on, whatever
its hostname says.

A node's hostname is what its UTS namespace, container or admin says; the boot id is the
running kernel's (``/proc/sys/kernel/random/boot_id``, new at each boot, one per kernel:
every container and namespace of one machine shares it) and the machine id is the OS
install's (``/etc/machine-id``). Two runs with the same boot id ran on one kernel, hence one
machine, whatever their hostnames were.

The network namespace (``/proc/self/ns/net``'s inode) tells the nodes of one kernel apart: the
jobs of one node share its network (one address, one slurmd), a node in a namespace of its
own (the throwaway cluster's, a container with its own network) does not.
"""

from __future__ import annotations

import contextlib
import os
import platform

BOOT_ID = "/proc/sys/kernel/random/boot_id"
MACHINE_ID = "/etc/machine-id"
NET_NS = "/proc/self/ns/net"


def _read(path: str) -> str | None:
    with contextlib.suppress(OSError):
        return open(path).read().strip() or None  # noqa: SIM115
    return None


def _netns() -> str | None:
    with contextlib.suppress(OSError):
        return os.readlink(NET_NS)  # "net:[4026531840]": the namespace's inode
    return None


def host_identity() -> dict[str, str | None]:
    """``boot_id``, ``machine_id``, ``netns`` (None where unreadable) and ``hostname`` of
    this process."""
    return {
        "boot_id": _read(BOOT_ID),
        "machine_id": _read(MACHINE_ID),
        "netns": _netns(),
        "hostname": platform.node(),
    }
