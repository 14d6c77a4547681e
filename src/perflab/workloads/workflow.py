"""``wfcommons``: a real workflow's structure, runtimes and files (a WfCommons recipe).

Parameters (each a factor level): ``recipe`` (montage, epigenomics, blast, …), ``size`` (tasks
asked of the recipe; it makes about that many), ``seed`` (the instance), ``task_ms`` (the
mean task runtime after scaling: every trace runtime is multiplied by one factor, so the
workflow keeps its shape and fits in seconds), ``io_mb`` (0, the default: file sizes are
scaled by the runtimes' factor, so a workflow made 30,000× faster moves 30,000× fewer bytes
and keeps the trace's balance of I/O and compute; else the total MB its files add up to)
and ``kernel``.

Each task reads its input files (checking their sizes), runs perflab's calibrated kernel
for its scaled runtime, and writes its output files, in a private directory of the run.
Files no task writes are staged before the clock starts.  Tasks go through the engine's own
dependency mechanism (``Dependent.submit_after``: Parsl and Dask resolve futures, pools
chain callbacks); an engine without one but with a manager loop (Work Queue) gets the
workflow from the application, which submits each task when its parents are done, as
Makeflow does for Work Queue.  A task that starts before one of its parents ended fails
the run.  A batch smaller than the workflow (the warm-up) runs that many independent
kernel tasks instead.

Recorded: makespan (wall), ideal = the zero-overhead list schedule on the run's workers,
overhead = makespan − ideal, efficiency = ideal ÷ makespan, and each task's queue delay
(start − the moment its last parent ended, or the batch's start for a root).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from perflab.errors import PerflabError
from perflab.files import private_dir
from perflab.options import Opt
from perflab.tasks import Executor
from perflab.tasks.depend import Dependent
from perflab.workloads import WORKLOADS
from perflab.workloads.base import batch_summary
from perflab.workloads.kernel import KERNEL_OPT, KernelWorkload
from perflab.workloads.wfgen import Instance, generate, list_schedule, lower_bound
from perflab.workloads.wftask import wf_task, write_file


@WORKLOADS.register
class Workflow(KernelWorkload):
    name = "wfcommons"
    params: ClassVar[dict[str, Opt]] = {
        "recipe": Opt(default="montage", help="A WfCommons recipe (e.g. montage, blast)."),
        "size": Opt(default=100, help="Tasks in the workflow instance."),
        "seed": Opt(default=1, help="Random seed of the instance."),
        "task_ms": Opt(default=10.0, help="Mean task time after scaling (ms)."),
        "io_mb": Opt(default=0.0, help="Mean file size after scaling (MB; 0: no files)."),
        "kernel": KERNEL_OPT,
    }

    #: Tasks depend on each other; on an executor without a dependency mechanism (Work
    #: Queue) the workload resolves them itself through the engine's manager loop.
    needs_dependencies: ClassVar[bool] = True
    resolves_dependencies: ClassVar[bool] = True

    instance: Instance | None = None
    run_dir: Path | None = None
    warming = False

    @classmethod
    def resolve_params(cls, params: dict[str, Any]) -> dict[str, Any]:
        merged = super().resolve_params(params)
        if not merged["task_ms"] > 0:
            raise PerflabError("workload 'wfcommons': task_ms must be positive")
        generate(str(merged["recipe"]), int(merged["size"]), int(merged["seed"]))
        return merged

    def command(self) -> list[str]:
        raise PerflabError(
            "workload 'wfcommons' runs Python tasks with dependencies: job engines cannot "
            "run it (engines that can: parsl-htex, parsl-threads, dask, cf-threads, "
            "cf-processes, workqueue)"
        )

    def prepare(self) -> None:
        super().prepare()
        self.instance = generate(str(self.p["recipe"]), int(self.p["size"]), int(self.p["seed"]))
        inst = self.instance
        total = sum(inst.runtimes)
        self.scale = float(self.p["task_ms"]) * 1e-3 * inst.tasks / total if total else 0.0
        self.iters_of = [round(r * self.scale * self.rate) for r in inst.runtimes]
        nbytes = sum(inst.staged().values()) + sum(s for o in inst.outputs for _, s in o)
        io = float(self.p["io_mb"]) * 1e6
        self.file_scale = self.scale if not io else io / nbytes if nbytes else 0.0
        self.batches = 0

    def started(self, run_dir: Path) -> None:
        self.run_dir = run_dir

    def _bytes(self, files: tuple[tuple[str, int], ...]) -> tuple[tuple[str, int], ...]:
        return tuple((name, round(size * self.file_scale)) for name, size in files)

    def _stage(self) -> str:
        """A fresh private directory for this batch's files, its inputs written."""
        assert self.instance is not None and self.run_dir is not None
        self.batches += 1
        root = private_dir(self.run_dir / "workflow" / f"batch{self.batches}")
        for name, size in self._bytes(tuple(self.instance.staged().items())):
            write_file(str(root / name), size)
        return str(root)

    def run_batch(self, engine: Executor, n: int) -> dict[str, Any]:
        assert self.instance is not None
        if n < self.instance.tasks:  # warm-up: independent kernel tasks
            self.warming = True
            try:
                return super().run_batch(engine, n)
            finally:
                self.warming = False
        root, inst, kind = self._stage(), self.instance, str(self.p["kernel"])

        def args(i: int) -> tuple[Any, ...]:
            reads, writes = self._bytes(inst.inputs[i]), self._bytes(inst.outputs[i])
            return (i, self.iters_of[i], kind, root, reads, writes)

        self.batch_start = time.time()
        t0 = time.perf_counter()
        if engine.dependencies is None:
            results, t_sub, first = self._driven(engine, args)
        else:
            results, t_sub, first = self._chained(engine, args)
        t1 = time.perf_counter()
        self.results = results
        return batch_summary(self, engine, [], inst.tasks, (t0, t_sub, first, t1))

    def function(self) -> Any:  # the warm-up's task
        return wf_task

    def task_args(self, i: int) -> tuple[Any, ...]:
        return (i, self.iters_of[i % len(self.iters_of)], str(self.p["kernel"]), "", (), ())

    def _chained(self, engine: Executor, args: Any) -> tuple[list[Any], float, float | None]:
        assert self.instance is not None
        self.mode = str(engine.dependencies)
        dependent = Dependent(engine)
        try:
            futs: list[Any] = []
            for i, ps in enumerate(self.instance.parents):
                futs.append(dependent.submit_after(wf_task, [futs[p] for p in ps], *args(i)))
            t_sub = time.perf_counter()
            first, results = None, []
            for fut in engine.as_completed(futs):
                results.append(fut.result())
                first = first or time.perf_counter()
        finally:
            dependent.close()
        return results, t_sub, first

    def _driven(self, engine: Executor, args: Any) -> tuple[list[Any], float, float | None]:
        """The application resolves dependencies (Work Queue): submit each task once its
        parents are done, with their results."""
        assert self.instance is not None
        self.mode = "application"
        inst, loop = self.instance, engine.loop()
        kids, waiting = inst.children(), [len(ps) for ps in inst.parents]
        done: dict[int, Any] = {}
        pending = {engine.submit(wf_task, *args(i)): i for i in range(inst.tasks) if not waiting[i]}
        t_sub, first = time.perf_counter(), None
        while pending:
            loop.flush()
            for fut in loop.wait_first(pending):
                i = pending.pop(fut)
                done[i] = fut.result()
                first = first or time.perf_counter()
                for c in kids[i]:
                    waiting[c] -= 1
                    if not waiting[c]:
                        # the last parent to end is all the order check needs: a task's
                        # command line carries its arguments (Blast's merge has ~1,000)
                        last = max((done[p] for p in inst.parents[c]), key=lambda r: r[2])
                        pending[engine.submit(wf_task, *args(c), last)] = c
        return list(done.values()), t_sub, first

    def ideal_s(self, results: list[Any], slots: int) -> float | None:
        if self.warming or self.instance is None:
            return None
        runtimes = [k / self.rate if self.rate else 0.0 for k in self.iters_of]
        self.lower_s = lower_bound(runtimes, self.instance.parents, slots)
        return list_schedule(runtimes, self.instance.parents, slots)

    def details(self, results: list[Any], wall_s: float, slots: int) -> dict[str, Any]:
        if self.warming or not getattr(self, "results", None) or self.instance is None:
            return {}
        ideal = self.ideal_s([], slots)
        assert ideal is not None
        return {
            "recipe": self.p["recipe"],
            "workflow_tasks": self.instance.tasks,
            "dependencies": self.mode,
            "runtime_scale": self.scale,
            "file_scale": self.file_scale,
            "kernel_rate_per_s": self.rate,
            "ideal_s": ideal,
            "lower_bound_s": self.lower_s,
            "overhead_s": wall_s - ideal,
            # what the tasks wrote and read (each read checks the file's size)
            "bytes_staged": sum(s for _, s in self._bytes(tuple(self.instance.staged().items()))),
            "bytes_written": sum(s for o in self.instance.outputs for _, s in self._bytes(o)),
            "bytes_read": sum(s for i in self.instance.inputs for _, s in self._bytes(i)),
            **self._delays(),
        }

    def _delays(self) -> dict[str, Any]:
        """Per-task queue delay: start − when the task became ready (its last parent's end,
        or the batch's start for a root), as quantiles."""
        assert self.instance is not None
        by = {i: (s, e) for i, s, e in self.results}
        delays = []
        for i, ps in enumerate(self.instance.parents):
            ready = max((by[p][1] for p in ps), default=self.batch_start)
            delays.append(by[i][0] - ready)
        d = np.array(delays)
        q = np.quantile(d, [0.5, 0.9, 0.99])
        return {
            "queue_delay_mean_s": float(d.mean()),
            "queue_delay_p50_s": float(q[0]),
            "queue_delay_p90_s": float(q[1]),
            "queue_delay_p99_s": float(q[2]),
            "queue_delay_max_s": float(d.max()),
        }
