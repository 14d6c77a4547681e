"""perflab's hook, the Parsl part (copied beside the hook's ``sitecustomize.py`` as
``perflab_hook_parsl.py``): applies the treated values to the objects a Parsl program
builds and writes down what it did and saw. Standard library only until Parsl is imported.
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:  # the hook imports nothing it does not need at run time
    from collections.abc import Callable, Iterator
    from typing import Any

    Fact = dict[str, Any]


# --- applying and seeing ---------------------------------------------------------------------


class Hook:
    def __init__(self, treat: dict[str, Any], proof: Any) -> None:
        self.factors = treat.get("factors", {})
        self.proof = proof
        self.count: dict[str, Any] = {
            "submitted": 0,
            "completed": 0,
            "failed": 0,
            "first_submit": None,
            "last_result": None,
        }
        self.counting = False
        self._last_count: dict[str, Any] | None = None

    def ops(self, on: str) -> Iterator[tuple[str, dict[str, Any]]]:
        for factor, ops in sorted(self.factors.items()):
            for op in ops:
                if op.get("on") == on:
                    yield factor, op

    # values given in the file are JSON; a few stand for objects made here
    @staticmethod
    def value(v: Any, old: Any = None) -> Any:
        if isinstance(v, dict) and set(v) == {"in_run_dir"}:
            # a folder of the run's own private directory, named as the program named it
            sub = str(v["in_run_dir"])
            if not sub or os.sep in sub or sub.startswith("."):
                raise ValueError(f"refusing the folder {sub!r}")
            name = os.path.basename(os.path.normpath(str(old))) if old else "runinfo"
            return os.path.join(os.environ["PERFLAB_RUN_DIR"], sub, name)
        if isinstance(v, dict) and set(v) == {"class"}:
            mod, _, cls = v["class"].rpartition(".")
            if not mod.startswith(("parsl.", "distributed.", "dask.")):
                raise ValueError(f"refusing to make {v['class']!r}")
            import importlib

            return getattr(importlib.import_module(mod), cls)()
        return v

    def wrap_init(self, cls: Any, on: str, describe: Callable[[Any], str]) -> None:
        import functools
        import inspect

        orig = cls.__init__
        if getattr(orig, "_perflab_hooked", False):
            return
        sig = inspect.signature(orig)
        hook = self

        @functools.wraps(orig)
        def __init__(obj: Any, *args: Any, **kwargs: Any) -> None:
            changes: list[tuple[str, str, Any, Any, bool]] = []
            try:
                bound = sig.bind_partial(obj, *args, **kwargs)
                for factor, op in hook.ops(on):
                    arg = op.get("arg")
                    if arg is None:
                        continue
                    if arg not in sig.parameters:
                        hook.proof.write(
                            {
                                "fact": "error",
                                "factor": factor,
                                "object": on,
                                "error": f"this release's {on} has no option {arg}",
                            }
                        )
                        continue
                    explicit = arg in bound.arguments
                    default = sig.parameters[arg].default
                    old = bound.arguments[arg] if explicit else default
                    new = hook.value(op["value"], old)
                    bound.arguments[arg] = new
                    changes.append((factor, arg, old, new, explicit))
                args, kwargs = bound.args[1:], bound.kwargs
            except Exception as exc:  # never break the program: say so instead
                hook.proof.write({"fact": "error", "on": on, "error": repr(exc)})
                changes = []
            orig(obj, *args, **kwargs)
            label = describe(obj)
            for factor, arg, old, new, explicit in changes:
                hook.proof.write(
                    {
                        "fact": "set",
                        "factor": factor,
                        "object": label,
                        "option": arg,
                        "old": _show(old),
                        "new": _show(new),
                        "overrode_program": explicit,
                    }
                )
            for factor, op in hook.ops(on):
                path = op.get("attr")
                if path is None:
                    continue
                try:
                    target = obj
                    *parents, last = path.split(".")
                    for p in parents:
                        target = getattr(target, p)
                    old = getattr(target, last, None)
                    new = hook.value(op["value"])
                    setattr(target, last, new)
                    hook.proof.write(
                        {
                            "fact": "set",
                            "factor": factor,
                            "object": label,
                            "option": path,
                            "old": _show(old),
                            "new": _show(new),
                            "overrode_program": None,
                        }
                    )
                except Exception as exc:
                    hook.proof.write(
                        {
                            "fact": "error",
                            "factor": factor,
                            "object": label,
                            "option": path,
                            "error": repr(exc),
                        }
                    )
            hook.created(on, obj, label)

        __init__._perflab_hooked = True  # type: ignore[attr-defined]
        cls.__init__ = __init__

    def created(self, on: str, obj: Any, label: str) -> None:
        fact: Fact = {"fact": "created", "class": on, "object": label}
        if on == "Config":
            fact["executors"] = [type(e).__name__ for e in getattr(obj, "executors", [])]
        self.proof.write(fact)

    # --- Parsl ---------------------------------------------------------------------------

    def on_import(self, module: Any) -> None:
        """Which copy of a package this process imported (and from which script)."""
        self.proof.write(
            {
                "fact": "import",
                "package": module.__name__,
                "file": getattr(module, "__file__", None),
                "version": getattr(module, "__version__", None),
                "script": os.path.abspath(sys.argv[0]) if sys.argv and sys.argv[0] else None,
            }
        )

    def on_parsl(self, module: Any) -> None:
        self.on_import(module)
        if self.proof.argv0() == "process_worker_pool.py":
            self.proof.write({"fact": "pool", "options": _pool_options(sys.argv[1:])})

    def on_parsl_config(self, module: Any) -> None:
        self.wrap_init(module.Config, "Config", lambda c: f"Config(run_dir={c.run_dir!r})")

    def on_htex(self, module: Any) -> None:
        self.wrap_init(
            module.HighThroughputExecutor,
            "HighThroughputExecutor",
            lambda e: f"HighThroughputExecutor(label={e.label!r})",
        )

    def on_logconfig(self, module: Any) -> None:
        orig = module.oneshot_initialize_logging
        hook = self

        def oneshot_initialize_logging(*, log_config: Any, log_dir: Any, log_name: str) -> Any:
            hook.proof.write(
                {"fact": "logging", "component": log_name, "log_config": type(log_config).__name__}
            )
            return orig(log_config=log_config, log_dir=log_dir, log_name=log_name)

        module.oneshot_initialize_logging = oneshot_initialize_logging

    def on_dflow(self, module: Any) -> None:
        import atexit
        import functools
        import time

        dfk = module.DataFlowKernel
        orig = dfk.submit
        hook = self

        def done(fut: Any) -> None:
            c = hook.count
            c["last_result"] = time.time()
            if fut.exception() is None:
                c["completed"] += 1
            else:
                c["failed"] += 1

        @functools.wraps(orig)
        def submit(self: Any, *args: Any, **kwargs: Any) -> Any:
            c = hook.count
            if c["first_submit"] is None:
                c["first_submit"] = time.time()
            fut = orig(self, *args, **kwargs)
            c["submitted"] += 1
            try:
                fut.add_done_callback(done)
            except Exception:
                pass
            return fut

        dfk.submit = submit
        init = dfk.__init__

        @functools.wraps(init)
        def init_and_say(self: Any, *args: Any, **kwargs: Any) -> None:
            init(self, *args, **kwargs)
            where = os.path.abspath(str(getattr(self, "run_dir", "")))
            hook.proof.write({"fact": "run_dir", "system": "parsl", "path": where})

        dfk.__init__ = init_and_say
        if not self.counting:
            self.counting = True
            atexit.register(self.write_count)
        cleanup = dfk.cleanup

        @functools.wraps(cleanup)
        def cleanup_and_count(self: Any, *args: Any, **kwargs: Any) -> Any:
            try:
                return cleanup(self, *args, **kwargs)
            finally:
                hook.write_count()

        dfk.cleanup = cleanup_and_count

    def write_count(self) -> None:
        c = dict(self.count)
        if c["submitted"] and c != self._last_count:
            self._last_count = c
            self.proof.write({"fact": "tasks", "system": "parsl", **c})

    def watched(self) -> dict[str, Callable[[Any], None]]:
        """Module name -> what to do once it is imported."""
        return {
            "parsl": self.on_parsl,
            "parsl.config": self.on_parsl_config,
            "parsl.executors.high_throughput.executor": self.on_htex,
            "parsl.logconfigs.base": self.on_logconfig,
            "parsl.dataflow.dflow": self.on_dflow,
            # which other task systems a program uses (``factors list --for-command``)
            "dask": self.on_import,
        }


def _show(v: Any) -> Any:
    if v is None or isinstance(v, (bool, int, float, str)):
        return v
    return type(v).__name__


def _pool_options(argv: list[str]) -> dict[str, Any]:
    """The options a Parsl worker pool was started with (its own command line)."""
    names = {
        "-p": "prefetch_capacity",
        "--prefetch_capacity": "prefetch_capacity",
        "--poll": "poll_period",
        "--max_workers_per_node": "max_workers_per_node",
        "-b": "block_id",
        "--block_id": "block_id",
    }
    out: dict[str, Any] = {"debug": "-d" in argv or "--debug" in argv}
    i = 0
    while i < len(argv):
        a = argv[i]
        key, eq, val = a.partition("=")
        if key in names:
            if not eq and i + 1 < len(argv):
                i += 1
                val = argv[i]
            try:
                out[names[key]] = int(val)
            except ValueError:
                out[names[key]] = val
        i += 1
    return out
