"""The post-processing benchmark: the application itself keeps tasks in flight.

A manager keeps ``concurrency`` tasks in flight, creates a new task as each completes, and
must post-process every result (a busy loop of ``pp_s`` on the manager, which cannot dispatch
meanwhile).  ``policy`` is the factor under study:

* ``retrieve-one`` -- take one finished result, post-process it, submit its replacement;
* ``drain-many`` -- take every finished result, submit all their replacements, then
  post-process them (Work Queue's ``wait_retrieve_many`` done by the application).

The run's own dispatch and return latencies calibrate the SimPy model
(:mod:`perflab.workloads.postprocess_model`), whose predicted makespan goes in the record next
to the measured one.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from perflab.errors import PerflabError
from perflab.options import Opt
from perflab.tasks import Executor, shell_form
from perflab.workloads import WORKLOADS
from perflab.workloads.base import Workload
from perflab.workloads.postprocess_model import (
    POLICIES,
    Costs,
    ideal_makespan,
    simulate,
)


def _sleep_command(seconds: float) -> str:
    return f"date +%s.%N; sleep {seconds:.6f}; date +%s.%N"


def _parse_times(stdout: str) -> tuple[float, float]:
    start, end = (float(x) for x in stdout.split()[-2:])
    return start, end


@shell_form(_sleep_command, _parse_times)
def timed_sleep(seconds: float) -> tuple[float, float]:
    """The task: sleep, and say when it ran (wall clock, so the manager can compare)."""
    start = time.time()
    time.sleep(seconds)
    return start, time.time()


def busy(seconds: float) -> None:
    """Post-processing: hold the manager's CPU (and GIL) for ``seconds`` of wall time."""
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        pass


@dataclass
class _Trace:
    """What the loop saw; the model's costs are computed from it."""

    t0: float
    submits: list[float] = field(default_factory=list)  # submit-call durations
    submitted_at: dict[Any, float] = field(default_factory=dict)
    taken_at: dict[Any, float] = field(default_factory=dict)
    pp: list[float] = field(default_factory=list)
    blocked: float = 0.0
    first: float | None = None
    #: Per task: sent (or submitted), started, ended, received (or taken) -- wall clock.
    runs: list[tuple[float, float, float, float]] = field(default_factory=list)
    #: Per task: when the engine call that handed it over began.
    asked: list[float] = field(default_factory=list)


class _Loop:
    def __init__(self, engine: Executor, p: dict[str, Any], n: int) -> None:
        self.e, self.loop, self.p, self.n = engine, engine.loop(), p, n
        self.c = min(int(p["concurrency"]) or engine.workers_total(), max(n, 1))
        self.pending: set[Any] = set()
        self.submitted = 0
        self.tr = _Trace(t0=time.time())
        #: Per future: when the engine call that first handed it over began and ended.
        self.seen: dict[Any, tuple[float, float]] = {}

    def submit(self) -> None:
        s0 = time.time()
        fut = self.e.submit(timed_sleep, float(self.p["task_s"]))
        self.tr.submits.append(time.time() - s0)
        self.tr.submitted_at[fut] = s0
        self.pending.add(fut)
        self.submitted += 1

    def engine_wait(self, call: Callable[[set[Any]], set[Any]]) -> set[Any]:
        # Time spent inside the engine (waiting, or its manager working) is the model's to
        # play out; only the application's own time is charged to it as overhead.
        w0 = time.time()
        out = call(self.pending)
        w1 = time.time()
        self.tr.blocked += w1 - w0
        for fut in out:
            self.seen.setdefault(fut, (w0, w1))
        return out

    def take(self, drain: bool) -> list[Any]:
        # retrieve-one asks only for the next result (for Work Queue: one plain wait());
        # drain-many also takes everything else that has finished by then.
        ready = self.engine_wait(self.loop.ready) if drain else set()
        if not ready:
            ready = self.engine_wait(self.loop.wait_first)
            if drain:
                ready |= self.engine_wait(self.loop.ready)
        got = sorted(ready, key=lambda f: self.tr.submitted_at[f])
        if not drain:
            got = got[:1]
        now = time.time()
        if self.tr.first is None:
            self.tr.first = now - self.tr.t0
        for fut in got:
            self.pending.discard(fut)
            start, end = fut.result()
            # Without the engine's own times, a result is received when the engine first
            # handed it over (retrieve-one may take it only after later post-processing).
            asked, handed = self.seen.pop(fut, (now, now))
            sent, received = self.loop.task_times(fut) or (self.tr.submitted_at[fut], handed)
            self.tr.runs.append((sent, start, end, received))
            self.tr.asked.append(asked)
        return got

    def flush(self) -> None:
        w0 = time.time()
        self.loop.flush()
        self.tr.blocked += time.time() - w0

    def postprocess(self) -> None:
        b0 = time.time()
        busy(float(self.p["pp_s"]))
        self.tr.pp.append(time.time() - b0)

    def run(self, drain: bool) -> None:
        for _ in range(self.c):
            self.submit()
        self.flush()
        while len(self.tr.pp) < self.n:
            got = self.take(drain)
            if drain:
                k = min(len(got), self.n - self.submitted)
                for _ in range(k):
                    self.submit()
                if k:
                    self.flush()
            for _ in got:
                self.postprocess()
                if not drain and self.submitted < self.n:
                    self.submit()


def _mean(xs: list[float]) -> float:
    return sum(xs) / len(xs) if xs else 0.0


def task_samples(tr: _Trace) -> list[float]:
    """Each task's time on its worker (sent to ended), in the order it was sent."""
    return [
        round(max(end - sent, end - start, 0.0), 6)
        for sent, start, end, _rec in sorted(tr.runs, key=lambda r: r[0])
    ]


def predict(
    n: int,
    c: int,
    m: dict[str, Any],
    kind: str,
) -> dict[str, float]:
    """The model's makespan for every policy from one run's measured figures ``m`` (the
    record's ``measurement.workload``), so a stored run can be predicted again."""
    costs = Costs(**m["model_costs"])
    samples = m.get("task_samples")
    pols = (*POLICIES, *(("wq-retrieve-many",) if kind == "workqueue" else ()))
    pp = m.get("pp_samples")
    return {
        pol: simulate(
            n, c, m["mean_task_s"], m["mean_pp_s"], pol, kind, costs, m["clock_s"], samples, pp
        )
        for pol in pols
    }


def remodel(row: dict[str, Any]) -> dict[str, Any]:
    """A stored run (a study's row) predicted again by the current model from its own
    measured figures; a row without per-task samples (an older run) is left as it was."""
    if not row.get("task_samples") or row.get("status") != "ok":
        return row
    predicted = predict(int(row["tasks"]), int(row["concurrency"]), row, row["model_kind"])
    model = predicted[row["policy"]]
    return {
        **row,
        "model_by_policy": predicted,
        "model_makespan_s": model,
        "model_error": model / row["makespan_s"] - 1.0,
    }


def costs_from_trace(tr: _Trace, makespan: float, n: int, manager: dict[str, float]) -> Costs:
    """The model's per-task costs, measured in this run.

    Latency is dispatch (sent to started) plus return (ended to received).  A result received
    late waited for the manager, which the model plays out itself, so the return latency is
    the median over the results whose engine call was already under way when they ended
    (the application was waiting for them); the quickest quarter if there are none.  ``manager``
    holds the engine's own per-task send and receive costs where it has them (Work Queue's
    statistics).
    """
    dispatch = [start - sent for sent, start, _end, _rec in tr.runs]
    asked = zip(tr.runs, tr.asked, strict=True)
    prompt = [rec - end for (_s, _b, end, rec), a in asked if a <= end]
    back = sorted(rec - end for _sent, _start, end, rec in tr.runs)
    # The median: a few returns stalled by a busy CPU must not set every task's latency.
    ret = statistics.median(prompt) if prompt else _mean(back[: max(1, len(back) // 4)])
    # Application time outside post-processing and blocking waits (submits included).
    overhead = max(makespan - sum(tr.pp) - tr.blocked, 0.0) / max(n, 1)
    return Costs(
        take_s=overhead,
        latency_s=max(_mean(dispatch), 0.0) + max(ret, 0.0),
        return_s=max(ret, 0.0),
        send_s=manager.get("send_s", 0.0),
        recv_s=manager.get("recv_s", 0.0),
        call_s=manager.get("call_s", 0.0),
    )


@WORKLOADS.register
class Postprocess(Workload):
    """The post-processing benchmark; ``--tasks`` is its ``max tasks``."""

    name = "postprocess"
    params = {
        "concurrency": Opt(default=0, help="Tasks kept in flight (0: the engine's workers)."),
        "task_s": Opt(default=0.2, help="Each task's time (s)."),
        "pp_s": Opt(default=0.2, help="The application's post-processing time per result (s)."),
        "policy": Opt(choices=POLICIES, default="retrieve-one", help="How results are taken."),
    }

    @classmethod
    def resolve_params(cls, params: dict[str, Any]) -> dict[str, Any]:
        merged = super().resolve_params(params)  # checks policy against its choices
        if "concurrency" in params and int(merged["concurrency"]) < 1:
            raise PerflabError("workload 'postprocess': parameter concurrency must be >= 1")
        return merged

    def function(self) -> Callable[..., Any]:
        return timed_sleep

    def args(self) -> tuple[Any, ...]:
        return (0.0,)

    def run_batch(self, engine: Executor, n: int) -> dict[str, Any]:
        """Run the loop for ``n`` tasks on ``engine``; the batch's figures and the model's.

        The warm-up batch runs the same loop (keep ``--warmup`` small: each task is
        post-processed)."""
        loop = _Loop(engine, self.p, n)
        before = loop.loop.loop_stats()
        loop.run(self.p["policy"] == "drain-many")
        makespan = time.time() - loop.tr.t0
        return self.figures(loop, makespan, loop.loop.loop_costs(before), loop.loop.model_kind)

    def figures(
        self, loop: _Loop, makespan: float, extra: dict[str, float], kind: str
    ) -> dict[str, Any]:
        n, c, tr = loop.n, loop.c, loop.tr
        task_s, pp_s = float(self.p["task_s"]), float(self.p["pp_s"])
        ideal = ideal_makespan(n, c, task_s, pp_s)
        costs = costs_from_trace(tr, makespan, n, extra)
        ran = [end - start for _sub, start, end, _t in tr.runs]
        # The model replays the loop with this run's measured task and post-process times.
        measured = {
            "model_costs": costs.to_dict(),
            "mean_task_s": _mean(ran),
            "mean_pp_s": _mean(tr.pp),
            "task_samples": task_samples(tr),
            "pp_samples": [round(x, 6) for x in tr.pp],
            "clock_s": tr.t0 % 1.0,
            "model_kind": kind,
        }
        predicted = predict(n, c, measured, kind)
        model = predicted[self.p["policy"]]
        return {
            "tasks": n,
            "wall_s": makespan,
            "submit_s": _mean(tr.submits) * n,
            "first_result_s": tr.first if tr.first is not None else makespan,
            "workload_metrics": {
                "makespan_s": makespan,
                "ideal_makespan_s": ideal,
                "efficiency": ideal / makespan if makespan > 0 else None,
                "worker_idle_fraction": max(0.0, 1.0 - sum(ran) / (c * makespan)),
                "time_to_first_result_s": tr.first,
                "manager_busy_fraction": sum(tr.pp) / makespan if makespan > 0 else None,
                "concurrency": c,
                "model_makespan_s": model,
                "model_error": model / makespan - 1.0 if makespan > 0 else None,
                "model_by_policy": predicted,
                **measured,
            },
        }
