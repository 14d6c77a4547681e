"""The Parsl runner: each run is a Parsl task on a worker with a node to itself.

Use an executor with one worker per node (HTEX ``max_workers_per_node=1``), so that no two
measurements share a machine.  Results flow back to this process, the store's only writer.

With a ``SlurmProvider`` (docs/slurm.md) the workers run inside Slurm jobs: Slurm is asked
before anything runs (commands on PATH, munge, the partition: bad input otherwise), a job
that Slurm cancels or fails turns the runs still waiting for it into failed runs with
Slurm's own reason, and the jobs of a driver that was killed are cancelled by the next one.
"""

from __future__ import annotations

import time
import uuid
from concurrent.futures import FIRST_COMPLETED, Future, wait
from datetime import UTC, datetime
from typing import Any

from perflab.campaign.runners import RUNNERS
from perflab.campaign.runners.base import Runner, Work, store_result
from perflab.engines.parsl_common import (
    launch_initial_blocks,
    load_config_file,
    scripts_on_path,
    where_workers_run,
)
from perflab.errors import PerflabError
from perflab.options import Opt
from perflab.run.record import RunRecord
from perflab.spec import RunSpec

#: Seconds between looks at the Slurm jobs' states while runs are outstanding.
POLL_S = 2.0
#: Times a run is sent to a worker: an attempt whose worker was lost (its node died, its job
#: was cancelled) while other jobs still hold workers is measured again on one of them.
MAX_ATTEMPTS = 3
#: Seconds a lost attempt waits for Slurm's word on its node's job before it is stored
#: without it (a node's death takes SlurmdTimeout to be noticed).
REASON_WAIT_S = 40.0


def remote_measure(spec: dict[str, Any], runner: dict[str, Any] | None = None) -> dict[str, Any]:
    """Runs on the worker: measure one spec there and send the record back, its ``env``
    saying where it ran (``runner``: executor, provider, scheduler; ``host``: the physical
    host's identity, whatever the node's hostname says: boot id, machine id)."""
    from perflab.batch.hostid import host_identity
    from perflab.run.measure import measure
    from perflab.spec import RunSpec

    record = measure(RunSpec.from_dict(spec)).to_dict()
    if runner:
        record["env"]["runner"] = runner
    record["env"]["host"] = host_identity()
    return record


def describe(config: Any) -> dict[str, Any]:
    """What the runner's workers run on, for the records' ``env.runner``."""
    return {"name": "parsl", **where_workers_run(config)}


def slurm_providers(config: Any) -> list[Any]:
    """The SlurmProviders of a loaded Parsl config's executors."""
    from parsl.providers import SlurmProvider

    found = [getattr(ex, "provider", None) for ex in config.executors]
    return [p for p in found if isinstance(p, SlurmProvider)]


def check_config(path: str) -> Any:
    """Load a runner config file and check its batch system before anything is stored
    (PerflabError naming the file and the cause); returns the loaded config."""
    from perflab.batch.slurmjobs import check_provider

    config = load_config_file(path)
    for provider in slurm_providers(config):
        check_provider(provider, f"parsl config {path}")
    return config


@RUNNERS.register
class ParslRunner(Runner):
    """Options: ``parsl_config``, a file defining ``config`` or ``fresh_config()``."""

    name = "parsl"
    options = {
        "parsl_config": Opt(
            str,
            help="A Parsl config file (a module defining config or fresh_config()) "
            "whose executor runs each measured run: e.g. a SlurmProvider's.",
        )
    }

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        if not self.opts["parsl_config"]:  # said before a progress bar is shown
            raise PerflabError(
                "the parsl runner needs a Parsl config file (campaign run --runner-config, "
                "tune --runner-config)"
            )
        # checked here, before the campaign's lease or any run is taken
        self.config = check_config(self.opts["parsl_config"])

    def execute(self, work: Work) -> None:
        config, self.config = self.config, None
        if config is None:  # a second run of this runner: Parsl loads a config once
            config = check_config(self.opts["parsl_config"])
        run_parsl(work, config)


def run_parsl(work: Work, config: Any) -> None:
    """Send each pending run to the config's workers; store each record as it comes back."""
    import parsl
    from parsl.app.python import PythonApp

    from perflab.batch.slurmjobs import JobWatch, Leftovers

    if not work.pending:
        return
    scripts_on_path()
    providers = slurm_providers(config)
    leftovers = Leftovers() if providers else None
    if leftovers:
        leftovers.sweep()
    info = describe(config)
    began = time.monotonic()
    dfk = parsl.load(config)
    launch_initial_blocks(dfk, time.monotonic() - began)
    watch = JobWatch(providers) if providers else None
    try:
        app = PythonApp(remote_measure, data_flow_kernel=dfk)

        def submit(spec: RunSpec) -> Future[Any]:
            return app(spec.to_dict(), info)

        futures = {submit(spec): (seq, spec) for seq, spec in work.pending}
        _collect(work, futures, submit, watch, leftovers, dfk)
    finally:
        dfk.cleanup()
        parsl.clear()
        # the note of this driver's jobs goes only once Slurm holds none of them: a job
        # still held then is the next driver's to cancel
        if leftovers and watch is not None and not watch.release():
            leftovers.forget()


def _collect(
    work: Work,
    futures: dict[Future[Any], tuple[int, RunSpec]],
    submit: Any,
    watch: Any,
    leftovers: Any,
    dfk: Any,
) -> None:
    left = set(futures)
    attempts = {seq: 1 for seq, _ in futures.values()}
    lost: list[_Lost] = []  # attempts lost with their worker, waiting for Slurm's word
    while left or lost:
        if left:
            done, left = wait(left, timeout=POLL_S, return_when=FIRST_COMPLETED)
        else:
            done = set()
            time.sleep(POLL_S)
        gone = ""
        if watch is not None:
            submitted, alive = watch.poll()
            pids = [ex.interchange_proc.pid for ex in dfk.executors.values()
                    if getattr(ex, "interchange_proc", None) is not None]  # fmt: skip
            leftovers.record(watch.job_ids(), pids)
            if submitted and not alive and watch.reason():
                gone = watch.reason()  # nothing left to run them: they fail with its reason
            elif left and alive:
                _replace_blocks(dfk, watch)
        for fut in [*done, *(left if gone else [])]:
            seq, spec = futures[fut]
            exc = fut.exception() if fut.done() else None
            if exc is not None and watch is not None and not gone and attempts[seq] < MAX_ATTEMPTS:
                # its worker was lost (a node died, a job was cancelled) while other jobs
                # hold workers: measure it again there now; the lost attempt is stored
                # apart (unmeasured, with Slurm's reason) once Slurm says why
                host = str(getattr(exc, "hostname", "") or "")
                lost.append(_Lost(seq, spec, f"{type(exc).__name__}: {exc}", host))
                attempts[seq] += 1
                again = submit(spec)
                futures[again] = (seq, spec)
                left.add(again)
                continue
            record = _result(fut, spec, gone or (watch.reason() if watch else ""))
            if record is None:
                continue
            work.finish(record, seq)
        over = bool(gone) or work.over()
        for item in list(lost):
            said = watch.reason_on(item.host) if item.host else ""
            if said or over or time.monotonic() - item.at > REASON_WAIT_S:
                lost.remove(item)
                store_result(work.store, item.record(said), item.seq)
        if over:
            return


def _replace_blocks(dfk: Any, watch: Any) -> None:
    """A new block for each job that ended badly while runs remain and other jobs still
    hold or wait for workers: the campaign gets its nodes back (a revived node, one freed
    by a preemptor) instead of going on with fewer to its end."""
    for provider in watch.to_replace():
        for ex in dfk.executors.values():
            if getattr(ex, "provider", None) is provider:
                ex.scale_out_facade(1)


class _Lost:
    """One attempt whose worker was lost: stored as unmeasured, its run measured again."""

    def __init__(self, seq: int, spec: RunSpec, error: str, host: str) -> None:
        self.seq, self.spec, self.error, self.host = seq, spec, error, host
        self.at = time.monotonic()
        self.when = datetime.now(UTC).isoformat(timespec="milliseconds")

    def record(self, slurm_said: str) -> RunRecord:
        said = slurm_said or f"Slurm named no ended job on {self.host or 'its node'}"
        cause = f"lost with its Slurm job: {said} ({self.error}); measured again"
        return RunRecord.of(
            self.spec,
            uuid.uuid4().hex[:16],
            "failed",
            self.when,
            datetime.now(UTC).isoformat(timespec="milliseconds"),
            error=cause,
            measurement={"infrastructure": cause},
            env={"runner": {"name": "parsl", "scheduler": "slurm"}, "batch": {"node": self.host}},
        )


def _result(fut: Future[Any], spec: RunSpec, slurm_reason: str) -> RunRecord | None:
    """The run's record; a failed record if its Slurm job ended badly; None if the worker
    was lost otherwise (the run stays pending for a resume)."""
    if fut.done():
        try:
            return RunRecord.from_dict(fut.result())
        except Exception as exc:
            if not slurm_reason:
                print(f"perflab: a run was not measured ({exc}); resume to retry")
                return None
    now = datetime.now(UTC).isoformat(timespec="milliseconds")
    return RunRecord.of(
        spec,
        uuid.uuid4().hex[:16],
        "failed",
        now,
        now,
        error=f"lost with its Slurm job: {slurm_reason}",
        env={"runner": {"name": "parsl", "scheduler": "slurm"}},
    )
