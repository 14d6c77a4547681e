"""The network between a run's submit side and its workers, as a factor (issue 27).

perflab makes the network itself: a delaying TCP relay (``relay``) between the workers and
the server they connect to (HTEX's interchange, saga's sshd), started and stopped by the
engine like its other loopback servers (``engines.loopback.Relay``). Kernels with netem
could shape loopback instead; this one has none, so every run uses the relay and its record
says so (``env.net.mechanism``).
"""

from __future__ import annotations

from typing import Any

from perflab.options import Opt

#: Engine options that put a network between the workers and their server (None: direct).
NET_OPTIONS: dict[str, Any] = {"net_rtt_ms": None, "net_mbit": None}
#: Round trips up to 10 s (a satellite link is ~600 ms); rates from 0.01 Mbit/s to 100 Gbit/s.
NET_RULES: dict[str, Opt] = {
    "net_rtt_ms": Opt(float, lo=0, hi=10000),
    "net_mbit": Opt(float, above=0, hi=100000),
}


def shaped(opts: dict[str, Any]) -> bool:
    """Whether the options ask for a network (``net_rtt_ms=0`` does: the relay, no delay)."""
    return any(opts.get(k) is not None for k in NET_OPTIONS)


def net_env(opts: dict[str, Any]) -> dict[str, Any]:
    """The record's ``env.net``: the mechanism and the levels a run used."""
    if not shaped(opts):
        return {"mechanism": "direct"}
    rtt = opts.get("net_rtt_ms")
    return {
        "mechanism": "relay",
        "rtt_ms": float(rtt) if rtt is not None else 0.0,
        "mbit": float(opts["net_mbit"]) if opts.get("net_mbit") is not None else None,
    }
