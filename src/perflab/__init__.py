"""perflab: a performance laboratory for high-throughput task systems.

The Python API mirrors the CLI: ``perflab.api`` has each verb's work as a function
(``api.run``, ``api.campaign_create``, ``api.analyze``, ``api.compare``, ``api.tune``, …)::

    from perflab import RunSpec, api
    (record,) = api.run(RunSpec(target="parsl-htex", workload="noop", time_s=5))
    print(record.us_per_task)

Names are imported on first use, so ``import perflab.analysis`` pulls in no engine.
"""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"

_EXPORTS = {
    "PerflabError": "perflab.errors",
    "RunRecord": "perflab.run.record",
    "RunSpec": "perflab.spec",
    "measure": "perflab.run.measure",
    "measure_repeated": "perflab.run.measure",
    "report_on": "perflab.api",
}
__all__ = [*_EXPORTS, "__version__"]


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        return getattr(importlib.import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'perflab' has no attribute {name!r}")
