"""``probe``: each task reports, from inside the worker, what is in force there.

Each task writes ``$PERFLAB_RUN_DIR/probe/<pid>.json`` (CPU affinity, nice, scheduling
policy, environment markers, the main script and Parsl modules imported, logging handlers),
so tests and users can verify that a treatment really reached the measured processes.
"""

from __future__ import annotations

import json
import logging
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from perflab.options import Opt
from perflab.workloads import WORKLOADS
from perflab.workloads.base import Workload


def process_facts() -> dict[str, Any]:
    main = sys.modules.get("__mp_main__") or sys.modules.get("__main__")
    handlers = [
        type(h).__name__ + ":" + str(getattr(h, "baseFilename", ""))
        for name in ("", "parsl")
        for h in logging.getLogger(name).handlers
    ]
    return {
        "pid": os.getpid(),
        "affinity": sorted(os.sched_getaffinity(0)),
        "nice": os.nice(0),
        "policy": os.sched_getscheduler(0),
        "env": {k: v for k, v in os.environ.items() if k.startswith("PERFLAB_")},
        "python": sys.executable,
        "main_file": getattr(main, "__file__", None),
        "modules": {
            name: getattr(sys.modules[name], "__file__", None)
            for name in ("parsl", "parsl.dataflow.dflow")
            if name in sys.modules
        },
        "log_handlers": handlers,
        "path0": sys.path[:3],
    }


def probe_task(payload: str) -> int:
    facts = process_facts()
    run_dir = os.environ.get("PERFLAB_RUN_DIR")
    if run_dir:
        out = Path(run_dir) / "probe"
        out.mkdir(exist_ok=True)
        (out / f"{facts['pid']}.json").write_text(json.dumps(facts))
    return 7


@WORKLOADS.register
class Probe(Workload):
    name = "probe"
    params = {"arg_bytes": Opt(default=0, help="Bytes of the argument each task is sent.")}

    def function(self) -> Callable[..., Any]:
        return probe_task

    def args(self) -> tuple[Any, ...]:
        return ("x" * int(self.p["arg_bytes"]),)

    def started(self, run_dir: Path) -> None:
        # The submit side's own facts, beside those each task writes from its worker.
        (run_dir / "probe").mkdir(exist_ok=True)
        (run_dir / "probe" / "submit.json").write_text(json.dumps(process_facts()))
