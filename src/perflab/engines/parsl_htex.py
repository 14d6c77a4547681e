"""Parsl's HighThroughputExecutor on a LocalProvider: interchange + worker pool processes.

``net_rtt_ms`` / ``net_mbit`` put a network between the worker pools and the interchange: a
delaying relay (``engines.loopback.Relay``) listens where the pools connect and forwards to
the interchange's worker port; the submit side still talks to the interchange directly.
"""

from __future__ import annotations

import inspect
import os
from typing import Any, ClassVar

from perflab.engines import ENGINES
from perflab.engines.affinity import cpu_list, role_cores, worker_affinity
from perflab.engines.htex_watch import InterchangeWatch
from perflab.engines.loopback import Relay, free_port
from perflab.engines.parsl_common import LOGGING_HELP, ParslEngine, log_config
from perflab.errors import PerflabError, insecure_refusal
from perflab.net import NET_OPTIONS, net_env, resolve_net, shaped
from perflab.options import Opt

#: HTEX constructor arguments that perflab options map onto (None: keep Parsl's default).
HTEX_OPTIONS = ("prefetch_capacity", "poll_period", "encrypted", "worker_debug", "cores_per_worker")


@ENGINES.register
class HtexEngine(ParslEngine):
    name = "parsl-htex"
    options: ClassVar[dict[str, Opt]] = {
        **ParslEngine.options,
        "blocks": Opt(int, lo=1, default=1, help="Blocks of workers the provider starts."),
        "initialize_logging": Opt(choices=(True, False, "noop"), help=LOGGING_HELP),
        "affinity": Opt(choices=("roles",), help="roles: pin workers, manager and interchange."),
        # HTEX's own keywords (None: the release's default)
        "prefetch_capacity": Opt(int, lo=0, help="Tasks a worker pool fetches ahead."),
        "poll_period": Opt(int, lo=1, help="The pool's and interchange's poll period (ms)."),
        "encrypted": Opt(bool, help="Encrypt the interchange's traffic (false: --allow-insecure)."),
        "worker_debug": Opt(bool, help="Workers log at DEBUG."),
        "cores_per_worker": Opt(float, above=0, help="Cores each worker takes."),
        **NET_OPTIONS,
    }

    @classmethod
    def resolve_options(cls, options: dict[str, Any]) -> dict[str, Any]:
        return resolve_net(cls.name, super().resolve_options(options))

    @classmethod
    def insecure(cls, options: dict[str, Any], parsl_config: str | None) -> str | None:
        if options.get("encrypted") is False:
            return "HTEX unencrypted (option encrypted=false, e.g. factor cfg_unencrypted)"
        return None

    def workers_total(self) -> int:
        return int(self.opts["workers"]) * int(self.opts["blocks"])

    def build_config(self) -> Any:
        from parsl.config import Config
        from parsl.executors import HighThroughputExecutor
        from parsl.providers import LocalProvider

        htex_kwargs = {k: self.opts[k] for k in HTEX_OPTIONS if self.opts[k] is not None}
        # Parsl before 2024.3 called this option `max_workers`; `perflab history` measures
        # older releases too.
        params = inspect.signature(HighThroughputExecutor.__init__).parameters
        workers = "max_workers_per_node" if "max_workers_per_node" in params else "max_workers"
        htex_kwargs[workers] = int(self.opts["workers"])
        if "encrypted" in params and self.opts["encrypted"] is None:
            # Releases before encryption became the default would otherwise run an
            # interchange that unpickles whatever anyone on loopback sends it.
            htex_kwargs["encrypted"] = True
        blocks = int(self.opts["blocks"])
        executor = HighThroughputExecutor(
            label="htex",
            address="127.0.0.1",
            provider=LocalProvider(init_blocks=blocks, min_blocks=blocks, max_blocks=blocks),
            **htex_kwargs,
        )
        # usage tracking is off by default in every release (a bool before 2024.9, an int
        # level since): not passing it works for both
        return Config(executors=[executor], strategy="none")

    def tune(self, config: Any) -> None:
        """Apply options to the config; to a user's config file only those given explicitly."""
        from parsl.executors import HighThroughputExecutor

        given = self.given if self.parsl_config else self.opts
        explicit = {k: v for k, v in given.items() if v is not None}
        for ex in config.executors:
            if not isinstance(ex, HighThroughputExecutor):
                continue
            if self.parsl_config:
                for k in HTEX_OPTIONS:
                    if k in explicit:
                        setattr(ex, k, explicit[k])
                if "workers" in explicit:
                    ex.max_workers_per_node = int(explicit["workers"])
            if explicit.get("affinity") == "roles":
                self._pin_roles(ex)
            if shaped(self.opts):
                self._behind_relay(ex)
        if "initialize_logging" in explicit:
            config.initialize_logging = log_config(explicit["initialize_logging"])
        self._refuse_unencrypted(config)

    def _behind_relay(self, ex: Any) -> None:
        """Bind the interchange's worker port on loopback and point the pools' launch
        command at a relay in front of it (started now: it connects on demand)."""
        if "--port={worker_port}" not in ex.launch_cmd:
            raise PerflabError(
                f"net_rtt_ms: HTEX executor {ex.label!r} has no `--port={{worker_port}}` in its "
                "launch_cmd (this Parsl release's pools connect otherwise), so no relay can "
                "stand in front of its interchange"
            )
        # the workers run on this machine and meet the relay on loopback
        ex.address, ex.all_addresses = "127.0.0.1", {"127.0.0.1"}
        ex.worker_port = free_port()
        relay = Relay(self.run_dir / "net", ex.worker_port, *self._net_levels())
        self.relays.append(relay)
        relay.start()
        ex.launch_cmd = ex.launch_cmd.replace("--port={worker_port}", f"--port={relay.port}")

    def _net_levels(self) -> tuple[float, float | None]:
        rtt, mbit = self.opts["net_rtt_ms"], self.opts["net_mbit"]
        return float(rtt or 0), (float(mbit) if mbit is not None else None)

    def start(self) -> None:
        self.relays: list[Relay] = []
        self.watch: InterchangeWatch | None = None
        super().start()

    def arm(self, config: Any) -> None:
        """A dead interchange fails the run at once, with its cause (``htex_watch``)."""
        from parsl.executors import HighThroughputExecutor

        htex = [ex for ex in config.executors if isinstance(ex, HighThroughputExecutor)]
        if htex:
            self.watch = InterchangeWatch(htex, self.run_dir)
            self.watch.start()

    def shutdown(self) -> None:
        """Parsl first (its pools talk through the relays), then the relays, by PID; the
        interchange's watch before all (the shutdown ends the interchange)."""
        try:
            watch = getattr(self, "watch", None)
            if watch is not None:
                watch.stop()
            if hasattr(self, "dfk"):
                super().shutdown()
        finally:
            for relay in getattr(self, "relays", []):
                relay.stop()

    def record_env(self) -> dict[str, Any]:
        return {**super().record_env(), "net": net_env(self.opts)}

    def _refuse_unencrypted(self, config: Any) -> None:
        """What shows only once the config is built: a release without encryption, or a
        user's config file that turns it off."""
        from parsl.executors import HighThroughputExecutor

        if self.allow_insecure:
            return
        has = "encrypted" in inspect.signature(HighThroughputExecutor).parameters
        for ex in config.executors:
            if isinstance(ex, HighThroughputExecutor) and not getattr(ex, "encrypted", False):
                why = "encrypted=False in its config" if has else "this release has no encryption"
                raise insecure_refusal(f"HTEX executor {ex.label!r} unencrypted ({why})")

    def _pin_roles(self, ex: Any) -> None:
        cores = role_cores(os.cpu_count() or 1)
        os.sched_setaffinity(0, cores["submit"])
        ex.interchange_launch_cmd = [
            "taskset",
            "-c",
            cpu_list(cores["interchange"]),
            *ex.interchange_launch_cmd,
        ]
        # Workers inherit the manager's mask and pin themselves within it, so the manager
        # gets its own cores plus the workers'.
        manager = sorted(set(cores["manager"]) | set(cores["workers"]))
        ex.launch_cmd = f"taskset -c {cpu_list(manager)} {ex.launch_cmd}"
        ex.cpu_affinity = worker_affinity(int(ex.max_workers_per_node), cores["workers"])
