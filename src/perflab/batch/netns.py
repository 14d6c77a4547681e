"""The private network of a throwaway multi-node Slurm: one bridge, and per node a network
and UTS namespace joined to it by a veth pair. Needs root (``ip``, ``unshare``).

Every name carries the owning process's PID, so that two clusters (two users, two test runs)
never collide and a cluster whose owner was SIGKILLed can be found and removed by the next
one (``sweep``):

* bridge ``plb<pid>`` (Linux allows 15 characters for a link name), with ``10.203.K.1/24``;
* namespace ``perflab-<pid>-n<i>``, its hostname ``node<i>``, its address ``10.203.K.(10+i)``
  on its ``eth0``;
* the veth's host end ``plv<pid>n<i>``, enslaved to the bridge.

``K`` is the first /24 of 10.203.0.0/16 no address of this machine is in. Nothing leaves the
bridge: it has no uplink, and no route or forwarding is added.
"""

from __future__ import annotations

import contextlib
import ipaddress
import os
import re
import signal
import subprocess
import time

import psutil

from perflab.errors import PerflabError

NS_PREFIX = "perflab-"
BRIDGE_PREFIX = "plb"
VETH_PREFIX = "plv"
#: The /16 the clusters' /24s are taken from.
SUPERNET = ipaddress.ip_network("10.203.0.0/16")


def ip(*argv: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    out = subprocess.run(["ip", *argv], capture_output=True, text=True, timeout=30)
    if check and out.returncode != 0:
        raise PerflabError(f"throwaway Slurm: ip {' '.join(argv)}: {out.stderr.strip()}")
    return out


def ns_name(owner: int, i: int) -> str:
    return f"{NS_PREFIX}{owner}-n{i}"


def bridge_name(owner: int) -> str:
    return f"{BRIDGE_PREFIX}{owner}"


def veth_name(owner: int, i: int) -> str:
    return f"{VETH_PREFIX}{owner}n{i}"


def free_subnet() -> ipaddress.IPv4Network:
    """A /24 of ``SUPERNET`` that no address of this machine is in (nor any namespace of
    ours: their addresses are not visible from here, their bridges' are)."""
    used = set()
    for line in ip("-o", "-4", "addr", "show").stdout.splitlines():
        found = re.search(r"inet (\S+)", line)
        if found:
            used.add(ipaddress.ip_interface(found.group(1)).network)
    start = os.getpid() % 250
    for k in [*range(start, 254), *range(1, start)]:
        net = ipaddress.IPv4Network(f"10.203.{k + 1}.0/24")
        if not any(net.overlaps(u) for u in used):
            return net
    raise PerflabError("throwaway Slurm: no free /24 left in 10.203.0.0/16")


class Network:
    """The bridge and the nodes' namespaces of one cluster, made by ``up()``, removed by
    ``down()`` (also whatever runs in the namespaces)."""

    def __init__(self, nodes: int, owner: int | None = None) -> None:
        self.owner = owner or os.getpid()
        self.nodes = nodes
        self.subnet = free_subnet()
        hosts = list(self.subnet.hosts())
        self.host_addr = str(hosts[0])
        self.addrs = [str(hosts[9 + i]) for i in range(1, nodes + 1)]
        self.bridge = bridge_name(self.owner)

    def ns(self, i: int) -> str:
        return ns_name(self.owner, i)

    def up(self) -> None:
        plen = self.subnet.prefixlen
        ip("link", "add", self.bridge, "type", "bridge")
        ip("addr", "add", f"{self.host_addr}/{plen}", "dev", self.bridge)
        ip("link", "set", self.bridge, "up")
        for i in range(1, self.nodes + 1):
            ns, host_end, peer = self.ns(i), veth_name(self.owner, i), f"plp{self.owner}n{i}"
            ip("netns", "add", ns)
            ip("link", "add", host_end, "type", "veth", "peer", "name", peer)
            ip("link", "set", peer, "netns", ns)
            ip("link", "set", host_end, "master", self.bridge)
            ip("link", "set", host_end, "up")
            ip("-n", ns, "link", "set", peer, "name", "eth0")
            ip("-n", ns, "addr", "add", f"{self.addrs[i - 1]}/{plen}", "dev", "eth0")
            ip("-n", ns, "link", "set", "eth0", "up")
            ip("-n", ns, "link", "set", "lo", "up")

    def node_argv(self, i: int, hostname: str, hosts: str, argv: list[str]) -> list[str]:
        """``argv`` run in node ``i``'s network namespace and UTS and mount namespaces of
        its own: hostname ``hostname``, ``hosts`` seen as /etc/hosts (Slurm binds to what
        its host name resolves to). exec'd throughout: the PID is the program's."""
        inner = f'hostname {hostname} && mount --bind {hosts} /etc/hosts && exec "$@"'
        # nsenter, not ``ip netns exec``: that one remounts /sys, without its cgroup mount
        return ["nsenter", f"--net=/run/netns/{self.ns(i)}", "unshare", "--uts", "--mount", "--",
                "sh", "-c", inner, "sh", *argv]  # fmt: skip

    def kill_node(self, i: int) -> list[int]:
        """SIGKILL every process in node ``i``'s network namespace (a node's crash);
        returns their PIDs."""
        return kill_ns(self.ns(i))

    def down(self) -> None:
        remove(self.owner)


def ns_pids(ns: str) -> list[int]:
    out = ip("netns", "pids", ns, check=False)
    return [int(p) for p in out.stdout.split() if p.isdigit()]


def kill_ns(ns: str) -> list[int]:
    killed: list[int] = []
    for _ in range(5):  # a dying parent may still fork: look again
        pids = [p for p in ns_pids(ns) if p != os.getpid()]
        if not pids:
            break
        for pid in pids:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        killed += pids
        procs = []
        for pid in pids:
            with contextlib.suppress(psutil.Error):
                procs.append(psutil.Process(pid))
        psutil.wait_procs(procs, timeout=5)
    return killed


def namespaces() -> list[str]:
    out = ip("netns", "list", check=False)
    return [line.split()[0] for line in out.stdout.splitlines() if line.strip()]


def links() -> list[str]:
    out = ip("-o", "link", "show", check=False)
    names = re.findall(r"^\d+: ([^:@\s]+)", out.stdout, re.MULTILINE)
    return names


def owned(owner: int) -> tuple[list[str], list[str]]:
    """The namespaces and links named after ``owner``."""
    nss = [n for n in namespaces() if n.startswith(f"{NS_PREFIX}{owner}-n")]
    lks = [
        n
        for n in links()
        if n == bridge_name(owner) or re.fullmatch(rf"{VETH_PREFIX}{owner}n\d+", n)
    ]
    return nss, lks


def remove(owner: int) -> None:
    """Kill whatever runs in ``owner``'s namespaces, then delete them, the veths and the
    bridge (deleting a namespace takes its veth end with it; the host end goes too)."""
    nss, lks = owned(owner)
    for ns in nss:
        kill_ns(ns)
        ip("netns", "del", ns, check=False)
    for name in lks:
        ip("link", "del", name, check=False)
    deadline = time.monotonic() + 5
    while any(owned(owner)) and time.monotonic() < deadline:
        time.sleep(0.1)


def owners() -> set[int]:
    """PIDs named by the namespaces and links of any throwaway cluster on this machine."""
    found: set[int] = set()
    for n in namespaces():
        m = re.fullmatch(rf"{NS_PREFIX}(\d+)-n\d+", n)
        if m:
            found.add(int(m.group(1)))
    for n in links():
        m = re.fullmatch(rf"(?:{BRIDGE_PREFIX}(\d+)|{VETH_PREFIX}(\d+)n\d+)", n)
        if m:
            found.add(int(m.group(1) or m.group(2)))
    return found


def sweep() -> list[int]:
    """Remove the namespaces, veths and bridges of clusters whose owner is dead; returns
    those owners' PIDs."""
    dead = [pid for pid in owners() if not psutil.pid_exists(pid)]
    for pid in dead:
        remove(pid)
    return dead


def with_hosts(hosts: str, argv: list[str]) -> list[str]:
    """``argv`` in a mount namespace of its own that sees ``hosts`` as /etc/hosts."""
    inner = f'mount --bind {hosts} /etc/hosts && exec "$@"'
    return ["unshare", "--mount", "--", "sh", "-c", inner, "sh", *argv]
