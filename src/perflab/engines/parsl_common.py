"""What the Parsl engines share: loading parsl-perf style config files and running a DFK."""

from __future__ import annotations

import importlib.util
import inspect
import os
import sys
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

from perflab.engines.base import ExecutorEngine
from perflab.errors import PerflabError


def scripts_on_path() -> None:
    """Parsl launches interchange.py and process_worker_pool.py by name: make the running
    interpreter's bin directory findable, as an activated venv would."""
    bin_dir = str(Path(sys.executable).parent)
    path = os.environ.get("PATH", "")
    if bin_dir not in path.split(os.pathsep):
        os.environ["PATH"] = os.pathsep.join(p for p in (bin_dir, path) if p)


def launch_initial_blocks(dfk: Any, load_s: float) -> None:
    """Start the providers' ``init_blocks`` now rather than at Parsl's first useful strategy
    tick, one ``strategy_period`` (5 s by default) after load: nothing can run before the
    workers are up, and every engine run or runner stage used to wait for that tick.

    The poller's thread ticks at load and then every period; polling once here, well inside
    the first period, cannot overlap its next tick, and that tick then finds the blocks
    launched. Releases whose poller differs are left to their own timing.
    """
    poller = getattr(dfk, "job_status_poller", None)
    poll = getattr(poller, "poll", None)
    period = getattr(dfk.config, "strategy_period", 0)
    if poll is None or inspect.signature(poll).parameters or load_s > period / 2:
        return
    poll()


def load_config_file(path: str) -> Any:
    """Load a parsl-perf config file: a module defining ``config`` or ``fresh_config()``.

    Errors name the file (and the line, when the module raised).
    """
    p = Path(path)
    if not p.is_file():
        raise PerflabError(f"parsl config {path}: no such file")
    spec = importlib.util.spec_from_file_location(f"perflab_parsl_config_{abs(hash(p))}", p)
    if spec is None or spec.loader is None:
        raise PerflabError(f"parsl config {path}: not a loadable Python file")
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
        if hasattr(module, "fresh_config"):
            config = module.fresh_config()
        elif hasattr(module, "config"):
            config = module.config
        else:
            raise PerflabError(
                f"parsl config {path}: defines neither `config` nor `fresh_config()`"
            )
    except PerflabError:
        raise
    except BaseException as exc:  # user code: any failure is bad input, reported once
        line = _line_in(exc, p)
        where = f"{path}:{line}" if line else path
        raise PerflabError(f"parsl config {where}: {type(exc).__name__}: {exc}") from None
    from parsl.config import Config

    if not isinstance(config, Config):
        raise PerflabError(
            f"parsl config {path}: `config` is a {type(config).__name__}, not a Config"
        )
    return config


def where_workers_run(config: Any) -> dict[str, Any]:
    """The first executor of a loaded config: its class, provider, launcher and scheduler
    (``slurm`` for a SlurmProvider, else ``local`` or the provider's label), for a record's
    ``env``: which system the run used, so that it can be a factor."""
    ex = config.executors[0]
    provider = getattr(ex, "provider", None)
    info: dict[str, Any] = {"executor": type(ex).__name__, "provider": None}
    if provider is not None:
        label = str(getattr(provider, "label", "") or "")
        info["provider"] = type(provider).__name__
        info["launcher"] = type(getattr(provider, "launcher", None)).__name__
        info["scheduler"] = label if label and label != "local" else "local"
        if label == "slurm":
            info["partition"] = getattr(provider, "partition", None)
    return info


def _line_in(exc: BaseException, path: Path) -> int | None:
    line = None
    for frame in traceback.extract_tb(exc.__traceback__):
        if Path(frame.filename).resolve() == path.resolve():
            line = frame.lineno
    if line is None and isinstance(exc, SyntaxError):
        line = exc.lineno
    return line


class ParslEngine(ExecutorEngine):
    """Runs tasks as Parsl python_apps on a freshly loaded DataFlowKernel."""

    packages = ("parsl",)
    #: Parsl resolves AppFutures given as arguments (its DataFlowKernel holds the task back).
    dependencies = "native"

    @classmethod
    def validate(cls, options: dict[str, Any], parsl_config: str | None) -> None:
        cls.resolve_options(options)
        if parsl_config is not None:
            load_config_file(parsl_config)

    def build_config(self) -> Any:
        raise NotImplementedError

    def start(self) -> None:
        import parsl

        config = load_config_file(self.parsl_config) if self.parsl_config else self.build_config()
        config.run_dir = str(self.run_dir / "runinfo")
        self.tune(config)
        self.arm(config)
        self.workers_from = where_workers_run(config)
        began = time.monotonic()
        self.dfk = parsl.load(config)
        launch_initial_blocks(self.dfk, time.monotonic() - began)
        self._apps: dict[Callable[..., Any], Any] = {}

    def tune(self, config: Any) -> None:
        """Apply explicitly given options to a user-supplied config (hook for subclasses)."""

    def arm(self, config: Any) -> None:
        """Start what watches the config's processes from load to shutdown (hook for
        subclasses: HTEX's interchange)."""

    def record_env(self) -> dict[str, Any]:
        return {"parsl": getattr(self, "workers_from", {})}

    def submit(self, fn: Callable[..., Any], *args: Any) -> Any:
        app = self._apps.get(fn)
        if app is None:
            from parsl.app.python import PythonApp

            app = self._apps[fn] = PythonApp(fn, data_flow_kernel=self.dfk)
        return app(*args)

    def shutdown(self) -> None:
        import parsl

        self.dfk.cleanup()
        parsl.clear()

    def abandonable(self) -> bool:
        """Whether killing the run's tree after its last window loses nothing (run/teardown):
        every executor runs in this process or starts its workers here, as children
        (LocalProvider, single-node launcher), and no monitoring hub is writing."""
        from parsl.executors.threads import ThreadPoolExecutor
        from parsl.launchers import SimpleLauncher, SingleNodeLauncher
        from parsl.providers import LocalProvider

        dfk = getattr(self, "dfk", None)
        if dfk is None or getattr(dfk.config, "monitoring", None) is not None:
            return False
        for ex in dfk.config.executors:
            if isinstance(ex, ThreadPoolExecutor):
                continue
            provider = getattr(ex, "provider", None)
            launcher = getattr(provider, "launcher", None)
            if not isinstance(provider, LocalProvider) or not isinstance(
                launcher, SingleNodeLauncher | SimpleLauncher
            ):
                return False
        return True


#: The ``initialize_logging`` option of the Parsl engines.
LOGGING_HELP = "Parsl's initialize_logging (noop: NoopLogging for every component)."


def log_config(value: Any) -> Any:
    """``noop`` -> Parsl's NoopLogging for every component; booleans pass through."""
    if value == "noop":
        from parsl.logconfigs.noop import NoopLogging

        return NoopLogging()
    return value
