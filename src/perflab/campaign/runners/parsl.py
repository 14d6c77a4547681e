"""The Parsl runner: each run is a Parsl task on a worker with a node to itself.

Use an executor with one worker per node (HTEX ``max_workers_per_node=1``), so that no two
measurements share a machine.  Results flow back to this process, the store's only writer.
"""

from __future__ import annotations

import time
from concurrent.futures import as_completed
from typing import Any

from perflab.campaign.runners import RUNNERS
from perflab.campaign.runners.base import OnResult, Runner, store_result
from perflab.campaign.store import Store
from perflab.engines.parsl_common import load_config_file, scripts_on_path
from perflab.errors import PerflabError
from perflab.run.record import RunRecord
from perflab.run.spec import RunSpec


def remote_measure(spec: dict[str, Any]) -> dict[str, Any]:
    """Runs on the worker: measure one spec there and send the record back."""
    from perflab.run.measure import measure
    from perflab.run.spec import RunSpec

    return measure(RunSpec.from_dict(spec)).to_dict()


@RUNNERS.register
class ParslRunner(Runner):
    """Options: ``parsl_config``, a file defining ``config`` or ``fresh_config()``."""

    name = "parsl"
    options = {"parsl_config": None}

    def run(
        self,
        store: Store,
        pending: list[tuple[int, RunSpec]],
        deadline: float | None,
        on_result: OnResult | None,
    ) -> None:
        if not self.opts["parsl_config"]:
            raise PerflabError(
                "the parsl runner needs a Parsl config file (campaign run --parsl-config, "
                "tune --runner-config)"
            )
        run_parsl(store, pending, self.opts["parsl_config"], deadline, on_result)


def run_parsl(
    store: Store,
    pending: list[tuple[int, RunSpec]],
    parsl_config: str,
    deadline: float | None,
    on_result: OnResult | None,
) -> None:
    import parsl
    from parsl.app.python import PythonApp

    scripts_on_path()
    config = load_config_file(parsl_config)
    dfk = parsl.load(config)
    try:
        app = PythonApp(remote_measure, data_flow_kernel=dfk)
        futures = {app(spec.to_dict()): seq for seq, spec in pending}
        for i, fut in enumerate(as_completed(futures), 1):
            try:
                record = RunRecord.from_dict(fut.result())
            except Exception as exc:  # the worker was lost: the run stays pending for a resume
                print(f"perflab: run {futures[fut]} not measured ({exc}); resume to retry")
                continue
            store_result(store, record, futures[fut])
            if on_result:
                on_result(record, i, len(futures))
            if deadline is not None and time.monotonic() > deadline:
                break
    finally:
        dfk.cleanup()
        parsl.clear()
