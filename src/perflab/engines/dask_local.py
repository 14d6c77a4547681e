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


@ENGINES.register
class DaskEngine(ExecutorEngine):
    name = "dask"
    packages = ("dask", "distributed")
    #: Dask resolves futures given as arguments (the scheduler orders the graph).
    dependencies = "native"
    options: ClassVar[dict[str, Opt]] = {
        **ExecutorEngine.options,
        "threads_per_worker": Opt(int, lo=1, default=1, help="Threads in each worker process."),
    }

    def start(self) -> None:
        import dask
        from distributed import Client, LocalCluster

        no_routes: dict[str, list[str]] = {
            "distributed.scheduler.http.routes": [],
            "distributed.worker.http.routes": [],
        }
        with dask.config.set(no_routes):
            self.cluster = LocalCluster(
                n_workers=int(self.opts["workers"]),
                threads_per_worker=int(self.opts["threads_per_worker"]),
                processes=True,
                host="127.0.0.1",
                security=True,
                dashboard_address="127.0.0.1:0",
                local_directory=str(self.run_dir / "dask"),
            )
        self.client = Client(self.cluster)

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
