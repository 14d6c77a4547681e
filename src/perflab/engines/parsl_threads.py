"""Parsl's ThreadPoolExecutor: the DFK's own overhead without inter-process transport."""

from __future__ import annotations

from typing import Any, ClassVar

from perflab.engines import ENGINES
from perflab.engines.parsl_common import LOGGING_HELP, ParslEngine, log_config
from perflab.options import Opt


@ENGINES.register
class ParslThreadsEngine(ParslEngine):
    name = "parsl-threads"
    options: ClassVar[dict[str, Opt]] = {
        **ParslEngine.options,
        "initialize_logging": Opt(choices=(True, False, "noop"), help=LOGGING_HELP),
    }

    def build_config(self) -> Any:
        from parsl.config import Config
        from parsl.executors.threads import ThreadPoolExecutor

        kwargs: dict[str, Any] = {"usage_tracking": 0}
        if self.opts["initialize_logging"] is not None:
            kwargs["initialize_logging"] = log_config(self.opts["initialize_logging"])
        executor = ThreadPoolExecutor(label="threads", max_threads=int(self.opts["workers"]))
        return Config(executors=[executor], **kwargs)
