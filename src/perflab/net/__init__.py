"""The network between a run's submit side and its workers, as a factor (issue 27).

perflab makes the network itself: a delaying TCP relay (``relay``) between the workers and
the server they connect to (HTEX's interchange, saga's sshd), started and stopped by the
engine like its other loopback servers (``engines.loopback.Relay``). Kernels with netem
could shape loopback instead; this one has none, so every run uses the relay and its record
says so (``env.net.mechanism``).
"""

from __future__ import annotations

import math
from typing import Any

from perflab.errors import PerflabError
from perflab.options import Opt

#: Engine options that put a network between the workers and their server (None: direct);
#: ``resolve_net`` checks them (numbers may come as text, e.g. from a catalog level).
NET_OPTIONS: dict[str, Opt] = {
    "net_rtt_ms": Opt(own_check=True, help="Round trip added by a relay (ms, 0 to 10000)."),
    "net_mbit": Opt(own_check=True, help="The relay's rate (Mbit/s, 0.01 to 100000)."),
}
#: Each option's inclusive range: round trips up to 10 s (a satellite link is ~600 ms);
#: rates from 0.01 Mbit/s to 100 Gbit/s (0 would be no link at all).
NET_RANGES: dict[str, tuple[float, float]] = {"net_rtt_ms": (0, 10000), "net_mbit": (0.01, 1e5)}


def resolve_net(engine: str, opts: dict[str, Any]) -> dict[str, Any]:
    """``opts`` with the network options as floats; PerflabError naming the option if one
    is not a number in its range."""
    for key, (lo, hi) in NET_RANGES.items():
        raw = opts.get(key)
        if raw is None:
            continue
        try:
            value = float(raw) if not isinstance(raw, bool) else math.nan
        except (TypeError, ValueError):
            value = math.nan
        if not lo <= value <= hi:  # NaN fails too
            raise PerflabError(
                f"engine {engine!r}: option {key} must be a number in [{lo:g}, {hi:g}] "
                f"(got {raw!r})"
            )
        opts[key] = value
    return opts


def shaped(opts: dict[str, Any]) -> bool:
    """Whether the options ask for a network (``net_rtt_ms=0`` does: the relay, no delay)."""
    return any(opts.get(k) is not None for k in NET_OPTIONS)


def net_env(opts: dict[str, Any]) -> dict[str, Any]:
    """The record's ``env.net``: the mechanism and the levels a run used."""
    if not shaped(opts):
        return {"mechanism": "direct"}
    rtt, mbit = opts.get("net_rtt_ms"), opts.get("net_mbit")
    return {
        "mechanism": "relay",
        "rtt_ms": float(rtt) if rtt is not None else 0.0,
        "mbit": float(mbit) if mbit is not None else None,
    }
