"""Dask distributed on a LocalCluster of worker processes.

The cluster admits only its own run: every connection is TLS with a throwaway certificate
that both ends must present (``security=True``: Dask's ``Security.temporary()``), every
listener is on 127.0.0.1, and the HTTP servers that Dask always starts (the scheduler's on
the fixed port 8787 unless told otherwise) listen on a free loopback port and serve no
route. Without this, any local user could connect a ``Client`` and ``run`` code on the
workers as the perflab user.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any, ClassVar

from perflab.engines import ENGINES
from perflab.engines.base import ExecutorEngine
from perflab.options import Opt
from perflab.tasks import FuturesLoop, ManagerLoop

#: The Dask options a factor may treat (catalogs/dask.toml): option -> where it goes
#: (``config``: a dask.config key; ``cluster``: a LocalCluster keyword) and how a value is
#: written there. perflab's ``dask`` target and a user's Dask script (perflab/hook) both
#: apply them through :func:`dask_settings`.
DASK_KNOBS: dict[str, tuple[str, str, str]] = {
    "work_stealing": ("config", "distributed.scheduler.work-stealing", ""),
    "work_stealing_interval_ms": ("config", "distributed.scheduler.work-stealing-interval", "ms"),
    "compression": ("config", "distributed.comm.compression", ""),
    "tick_ms": ("config", "distributed.admin.tick.interval", "ms"),
    "client_heartbeat_s": ("config", "distributed.client.heartbeat", "s"),
    "memory_target": ("config", "distributed.worker.memory.target", ""),
    "memory_spill": ("config", "distributed.worker.memory.spill", ""),
    "memory_pause": ("config", "distributed.worker.memory.pause", ""),
    "processes": ("cluster", "processes", ""),
    "threads_per_worker": ("cluster", "threads_per_worker", ""),
    "log_level": ("cluster", "silence_logs", "loglevel"),
}
LOG_LEVELS = {"debug": 10, "info": 20, "warning": 30, "error": 40, "critical": 50}


def dask_settings(options: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """The dask.config keys and LocalCluster keywords that ``options`` (DASK_KNOBS names;
    None: Dask's default) stand for."""
    config: dict[str, Any] = {}
    cluster: dict[str, Any] = {}
    for name, value in options.items():
        if name not in DASK_KNOBS or value is None:
            continue
        where, key, unit = DASK_KNOBS[name]
        if unit == "loglevel":
            value = LOG_LEVELS[str(value)]
        elif unit and not isinstance(value, bool):
            value = f"{value}{unit}"
        (config if where == "config" else cluster)[key] = value
    return config, cluster


@ENGINES.register
class DaskEngine(ExecutorEngine):
    name = "dask"
    packages = ("dask", "distributed")
    #: Dask resolves futures given as arguments (the scheduler orders the graph).
    dependencies = "native"
    options: ClassVar[dict[str, Opt]] = {
        **ExecutorEngine.options,
        "threads_per_worker": Opt(int, lo=1, default=1, help="Threads in each worker process."),
        "processes": Opt(bool, help="Workers in processes (false: threads of the driver)."),
        "work_stealing": Opt(bool, help="The scheduler's work stealing."),
        "work_stealing_interval_ms": Opt(int, lo=1, help="How often the scheduler steals."),
        "compression": Opt(choices=(False, "zlib", "lz4", "auto"), help="Comm compression."),
        "tick_ms": Opt(int, lo=1, help="The event loop's tick interval."),
        "client_heartbeat_s": Opt(int, lo=1, help="The client's heartbeat to the scheduler."),
        "memory_target": Opt(choices=(False, 0.5, 0.6, 0.9), help="Worker spill target."),
        "memory_spill": Opt(choices=(False, 0.7, 0.95), help="Worker spill threshold."),
        "memory_pause": Opt(choices=(False, 0.8, 0.95), help="Worker pause threshold."),
        "log_level": Opt(choices=tuple(LOG_LEVELS), help="distributed's log level."),
    }

    def start(self) -> None:
        import dask
        from distributed import Client, LocalCluster

        no_routes: dict[str, Any] = {
            "distributed.scheduler.http.routes": [],
            "distributed.worker.http.routes": [],
        }
        config, cluster = dask_settings(self.opts)
        cluster = {"threads_per_worker": 1, "processes": True, **cluster}
        with dask.config.set({**config, **no_routes}):
            self.cluster = LocalCluster(
                n_workers=int(self.opts["workers"]),
                host="127.0.0.1",
                security=True,
                dashboard_address="127.0.0.1:0",
                local_directory=str(self.run_dir / "dask"),
                **cluster,
            )
            self.client = Client(self.cluster)  # the client's heartbeat is read here

    def submit(self, fn: Callable[..., Any], *args: Any) -> Any:
        # pure=False: identical no-op calls must each run, not be deduplicated by key.
        return self.client.submit(fn, *args, pure=False)

    def as_completed(self, futures: Iterable[Any]) -> Iterator[Any]:
        from distributed import as_completed

        return iter(as_completed(list(futures)))

    def task_stream_begin(self) -> None:
        from distributed import get_task_stream

        self._stream = get_task_stream(self.client)
        self._stream.__enter__()

    def task_stream_end(self) -> list[dict[str, Any]] | None:
        """Dask's task stream: per task, the worker and its compute start/stop (epoch s)."""
        self._stream.__exit__(None, None, None)
        out = []
        for rec in self._stream.data:
            for ss in rec.get("startstops", ()):
                if ss.get("action") == "compute":
                    out.append(
                        {
                            "key": str(rec.get("key")),
                            "worker": str(rec.get("worker")),
                            "start": float(ss["start"]),
                            "stop": float(ss["stop"]),
                        }
                    )
        return out

    def loop(self) -> ManagerLoop:
        from distributed import wait

        return FuturesLoop(wait)

    def shutdown(self) -> None:
        self.client.close()
        self.cluster.close()

    def abandonable(self) -> bool:
        """The LocalCluster's scheduler and workers are all in the run's tree, and nothing of
        their shutdown is recorded: the tree may be killed after the last window."""
        return True
