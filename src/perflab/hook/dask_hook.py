"""perflab's hook, the Dask part (copied beside the hook's ``sitecustomize.py`` as
``perflab_hook_dask.py``): once ``distributed`` is imported, in every process (the user's
script, the scheduler, each worker), it sets the treated ``dask.config`` keys, wraps
``LocalCluster.__init__`` to pass the treated keywords, and counts the tasks a ``Client``
submits. Every treated ``dask.config`` key (a hook-set one, or one a ``DASK_*`` variable of an
env factor sets) is read back with ``dask.config.get`` where Dask uses it: when the process
builds its first ``LocalCluster``, ``Scheduler``, ``Worker`` or ``Client``, or at its exit if it
built none (a ``dask_config`` fact: the value Dask resolved, and the one it would have
resolved from its files, variables and defaults without the treatment). Standard library
only until Dask is imported.
"""

from __future__ import annotations

import functools
import time

TYPE_CHECKING = False
if TYPE_CHECKING:  # the hook imports nothing it does not need at run time
    from collections.abc import Callable
    from typing import Any


def watched(hook: Any) -> dict[str, Callable[[Any], None]]:
    """Module name -> what to do once it is imported."""
    out: dict[str, Callable[[Any], None]] = {"distributed": functools.partial(on_distributed, hook)}
    if treated_keys(hook):  # a process that imports dask but not distributed resolves too
        out["dask.config"] = functools.partial(on_dask_config, hook)
    return out


#: The objects whose construction reads the configuration they run with.
RESOLVED_AT = ("LocalCluster", "Scheduler", "Worker", "Client")
_resolved: dict[str, Any] = {"pid": None, "at": set()}


def treated_keys(hook: Any) -> dict[str, str | None]:
    """Every treated ``dask.config`` key -> the ``DASK_*`` variable that sets it (None: the
    hook sets it itself)."""
    keys: dict[str, str | None] = {op["key"]: None for _, op in hook.ops("dask.config")}
    keys.update({op["key"]: op["var"] for _, op in hook.ops("dask_env")})
    return keys


def write_resolved(hook: Any, at: str) -> None:
    """Write what Dask resolved for each treated key in this process, once per object kind
    (``at``; ``exit`` only when nothing was written before)."""
    import os

    if _resolved["pid"] != os.getpid():  # a forked child resolves for itself
        _resolved.update(pid=os.getpid(), at=set())
    done = _resolved["at"]
    if at in done or (at == "exit" and done):
        return
    done.add(at)
    try:
        import dask.config

        keys = treated_keys(hook)
        values = {k: dask.config.get(k, None) for k in keys}
        # what Dask's files, variables and defaults say without the treatment's variables
        env = {k: v for k, v in os.environ.items() if k not in set(keys.values())}
        plain = dask.config.collect(env=env)
        for d in dask.config.defaults:
            dask.config.update(plain, d, priority="old")
        untreated = {k: dask.config.get(k, None, config=plain) for k in keys}
    except Exception as exc:  # never break the program: say so instead
        hook.proof.write({"fact": "error", "on": "dask.config", "error": repr(exc)})
        return
    hook.proof.write({"fact": "dask_config", "at": at, "values": values, "untreated": untreated})


def on_dask_config(hook: Any, module: Any) -> None:
    import atexit

    atexit.register(write_resolved, hook, "exit")


def _resolve_at(hook: Any, cls: Any, at: str) -> None:
    init = cls.__init__
    if getattr(init, "_perflab_resolved", False):
        return

    @functools.wraps(init)
    def resolving_init(self: Any, *args: Any, **kwargs: Any) -> None:
        write_resolved(hook, at)
        init(self, *args, **kwargs)

    resolving_init._perflab_resolved = True  # type: ignore[attr-defined]
    cls.__init__ = resolving_init


def on_distributed(hook: Any, module: Any) -> None:
    hook.on_import(module)
    import dask.config

    for factor, op in hook.ops("dask.config"):
        key = op["key"]
        old = dask.config.get(key, None)
        dask.config.set({key: op["value"]})
        hook.proof.write({
            "fact": "set", "factor": factor, "object": "dask.config", "option": key,
            "old": old, "new": dask.config.get(key, None), "overrode_program": None,
        })  # fmt: skip
    hook.wrap_init(
        module.LocalCluster,
        "LocalCluster",
        lambda c: f"LocalCluster(processes={getattr(c, 'processes', None)!r})",
    )
    _count(hook, module.Client)
    _count_scheduler(hook, module.Scheduler, module.SchedulerPlugin)
    if treated_keys(hook):
        for at in RESOLVED_AT:
            _resolve_at(hook, getattr(module, at), at)


def _count_scheduler(hook: Any, scheduler: Any, plugin: Any) -> None:
    """Count every task a Scheduler built in this process runs (a LocalCluster's is the
    program's own): the graphs of ``dask.compute`` and ``persist`` as well as the futures of
    ``submit`` and ``map``, from each graph's arrival to the last task in memory."""
    init = scheduler.__init__
    if getattr(init, "_perflab_counted", False):
        return
    count: dict[str, Any] = {"submitted": 0, "completed": 0, "failed": 0, "first_submit": None,
             "last_result": None}  # fmt: skip
    written: list[dict[str, Any]] = []
    keys: set[Any] = set()

    class Counter(plugin):
        name = "perflab-task-count"

        def update_graph(self, scheduler: Any, *, tasks: Any = (), **kwargs: Any) -> None:
            if count["first_submit"] is None:
                count["first_submit"] = time.time()
            # a graph touches the tasks it depends on again (a reduction over futures)
            keys.update(tasks or ())
            count["submitted"] = len(keys)

        def transition(self, key: Any, start: str, finish: str, *a: Any, **kw: Any) -> None:
            if start == "processing" and finish in ("memory", "erred"):
                count["last_result"] = time.time()
                count["completed" if finish == "memory" else "failed"] += 1

    @functools.wraps(init)
    def counted_init(self: Any, *args: Any, **kwargs: Any) -> None:
        init(self, *args, **kwargs)
        try:
            self.add_plugin(Counter(), idempotent=True)
        except Exception as exc:  # never break the program: say so instead
            hook.proof.write({"fact": "error", "on": "Scheduler", "error": repr(exc)})

    def write() -> None:
        if count["submitted"] and count != (written[-1] if written else None):
            written.append(dict(count))
            hook.proof.write({"fact": "tasks", "system": "dask", "counted_at": "scheduler",
                              **count})  # fmt: skip

    counted_init._perflab_counted = True  # type: ignore[attr-defined]
    scheduler.__init__ = counted_init
    close = scheduler.close

    @functools.wraps(close)
    async def close_and_count(self: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            return await close(self, *args, **kwargs)
        finally:
            write()

    scheduler.close = close_and_count
    import atexit

    atexit.register(write)


def _count(hook: Any, client: Any) -> None:
    """Count the futures a Client hands out (submit, map): first submit to last result."""
    if getattr(client.submit, "_perflab_counted", False):
        return
    count: dict[str, Any] = {"submitted": 0, "completed": 0, "failed": 0, "first_submit": None,
             "last_result": None}  # fmt: skip

    def done(fut: Any) -> None:
        count["last_result"] = time.time()
        count["completed" if fut.status == "finished" else "failed"] += 1

    def track(futs: list[Any]) -> None:
        if count["first_submit"] is None:
            count["first_submit"] = time.time()
        for fut in futs:
            count["submitted"] += 1
            try:
                fut.add_done_callback(done)
            except Exception:
                pass

    submit, map_ = client.submit, client.map

    @functools.wraps(submit)
    def counted_submit(self: Any, *args: Any, **kwargs: Any) -> Any:
        fut = submit(self, *args, **kwargs)
        track([fut])
        return fut

    @functools.wraps(map_)
    def counted_map(self: Any, *args: Any, **kwargs: Any) -> Any:
        futs = map_(self, *args, **kwargs)
        track(list(futs) if isinstance(futs, list) else [])
        return futs

    counted_submit._perflab_counted = True  # type: ignore[attr-defined]
    client.submit, client.map = counted_submit, counted_map
    close = client.close

    @functools.wraps(close)
    def close_and_count(self: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            return close(self, *args, **kwargs)
        finally:
            write()

    def write() -> None:
        if count["submitted"]:
            hook.proof.write({"fact": "tasks", "system": "dask", **count})

    client.close = close_and_count
    import atexit

    atexit.register(write)
