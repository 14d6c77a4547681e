"""A discrete-event model (SimPy) of the post-processing loop, for any parameter point.

Two kinds of engine:

* ``pool`` -- the engine dispatches and collects in its own threads (concurrent.futures,
  Dask, Parsl): a submitted task starts after a dispatch latency, and its result is available
  to the application a return latency after it ends, whatever the application is doing.
* ``workqueue`` -- Work Queue's ``wait()`` (cctools ``work_queue_wait_internal``): the manager
  sends and receives only inside ``wait()``, receives before it sends, and returns the first
  task it retrieves.  It learns that a task ended only when a pass of ``wait()`` polls the
  worker's message, so a task that ends while the application post-processes is unknown to
  the manager (and to a drain) until the next ``wait()``.  ``wq-retrieve-many`` is the
  documented ``wait_retrieve_many`` mode: keep receiving and sending until a pass moves
  nothing, then return the first task retrieved.

Each task occupies its worker for its own measured time (``samples``: sent to ended, in
submission order) and each post-process takes its own measured time (``pp_samples``) when
the run gives them: retrieve-one on Work Queue waits for the *first* of a round's tasks,
and whether a drain comes just before or just after a round ends decides how the rounds
interleave, so the spread matters, not only the mean.

The application keeps ``concurrency`` tasks in flight and post-processes every result:
``retrieve-one`` post-processes each result, then submits its replacement; ``drain-many``
takes every finished result and submits all replacements before post-processing them.
"""

from __future__ import annotations

import math
from collections.abc import Generator, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import simpy

POLICIES = ("retrieve-one", "drain-many")
MODEL_POLICIES = (*POLICIES, "wq-retrieve-many")
KINDS = ("pool", "workqueue")

Proc = Generator[simpy.Event, Any, Any]


@dataclass(frozen=True)
class Costs:
    """Per-task costs in seconds, measured in the run (see ``Calibration``)."""

    #: Application time per submit call.
    submit_s: float = 0.0
    #: Application time per result taken, besides post-processing and blocking.
    take_s: float = 0.0
    #: Dispatch-to-start plus end-to-available latency, spent off the manager.
    latency_s: float = 0.0
    #: The end-to-available part alone (used with per-task ``samples``, which hold dispatch).
    return_s: float = 0.0
    #: Work Queue: manager time per task sent / received, inside ``wait()``.
    send_s: float = 0.0
    recv_s: float = 0.0
    #: Work Queue: one request to the manager process and its reply (pipe round trip).
    call_s: float = 0.0

    def to_dict(self) -> dict[str, float]:
        return asdict(self)


class _Tasks:
    """Each task's time on its worker and its return latency, in submission order."""

    def __init__(self, task_s: float, k: Costs, samples: Sequence[float] | None) -> None:
        self.samples = list(samples or ())
        self.i = 0
        if self.samples:
            self.ret = k.return_s
        else:
            self.ret = k.latency_s / 2
            self.samples = [k.latency_s / 2 + task_s]

    def next(self) -> float:
        s = self.samples[self.i % len(self.samples)]
        self.i += 1
        return s


class _Pool:
    def __init__(self, env: simpy.Environment, c: int, tasks: _Tasks, k: Costs) -> None:
        self.env, self.tasks, self.k = env, tasks, k
        self.workers = simpy.Resource(env, c)
        self.available: simpy.Store = simpy.Store(env)

    def _task(self, occupy: float) -> Proc:
        with self.workers.request() as req:
            yield req
            yield self.env.timeout(occupy)
        yield self.env.timeout(self.tasks.ret)
        yield self.available.put(1)

    def submit(self) -> Proc:
        yield self.env.timeout(self.k.submit_s)
        self.env.process(self._task(self.tasks.next()))

    def flush(self) -> Proc:
        yield from ()

    def wait_one(self) -> Proc:
        yield self.available.get()
        yield self.env.timeout(self.k.take_s)
        return 1

    def drain(self) -> Proc:
        n = len(self.available.items)
        for _ in range(n):
            yield self.available.get()
        yield self.env.timeout(self.k.take_s * n)
        return n


class _WorkQueue:
    """Task counts by state, and the manager loop of ``work_queue_wait_internal``."""

    def __init__(
        self, env: simpy.Environment, c: int, tasks: _Tasks, k: Costs, policy: str, clock: float
    ) -> None:
        self.env, self.tasks, self.k, self.clock = env, tasks, k, clock
        self.many = policy == "wq-retrieve-many"
        # The driver's dispatch pass runs while the application post-processes.
        self.async_dispatch = policy == "drain-many"
        # unseen: ended, its message not yet read by a wait() pass; finished: known to the
        # manager (WAITING_RETRIEVAL), to be received.
        self.ready = self.unseen = self.finished = self.retrieved = 0
        self.free = c
        self.wake = env.event()
        self.pass_: simpy.Process | None = None

    def _run(self, occupy: float) -> Proc:
        yield self.env.timeout(occupy + self.tasks.ret)
        self.unseen += 1
        if not self.wake.triggered:
            self.wake.succeed()

    def _idle(self, stop: float | None) -> Proc:
        # Block in poll() until a worker message, for at most a second: poll's timeout is
        # min(1000, (stoptime - time(0)) * 1000) ms, a whole second while the loop runs, so a
        # wait(1) overshoots its stoptime until the next message (seen on this machine).
        self.wake = self.env.event()
        if stop is None:
            yield self.wake
        else:
            yield self.wake | self.env.timeout(1.0)

    def wait(self, stop: float | None = None) -> Proc:
        """One ``wait()`` call: 1 if it returned a task, 0 at its stoptime."""
        got = False
        if self.retrieved:
            self.retrieved -= 1
            if not self.many:
                return 1
            got = True
        block = False
        while stop is None or self.env.now < stop:
            # Each pass first reads the workers' messages (poll_active_workers), blocking if
            # the last pass did nothing; what the poll brings is handled even past stoptime.
            if block:
                yield from self._idle(stop)
            block = True
            self.finished += self.unseen
            self.unseen = 0
            if self.finished:
                yield self.env.timeout(self.k.recv_s)
                self.finished -= 1
                self.free += 1
                # Past the stoptime the loop ends before returning it: it stays RETRIEVED
                # and the next wait() hands it over at once.
                if got or (stop is not None and self.env.now >= stop):
                    self.retrieved += 1
                    block = False
                    continue
                got = True
                if not self.many:
                    return 1
                block = False
                continue
            if self.ready and self.free:
                yield self.env.timeout(self.k.send_s)
                self.ready -= 1
                self.free -= 1
                self.env.process(self._run(self.tasks.next()))
                block = False
                continue
            if got:
                return 1
        return 1 if got else 0

    def _serial(self) -> Proc:
        # The driver serves one request at a time: a dispatch pass finishes first.
        if self.pass_ is not None and not self.pass_.triggered:
            yield self.pass_

    def _dispatch(self) -> Proc:
        held = 0
        while self.ready:
            # wait(1) ends at the next whole second of the wall clock (time(0) + 1).
            held += yield from self.wait(math.floor(self.env.now + self.clock) + 1.0 - self.clock)
        self.retrieved += held

    def submit(self) -> Proc:
        yield self.env.timeout(self.k.submit_s)
        self.ready += 1

    def flush(self) -> Proc:
        yield self.env.timeout(self.k.call_s)
        if self.async_dispatch:
            self.pass_ = self.env.process(self._dispatch())
        yield from ()

    def wait_one(self) -> Proc:
        yield from self._serial()
        yield self.env.timeout(self.k.call_s)
        while not (yield from self.wait()):
            pass
        yield self.env.timeout(self.k.take_s)
        return 1

    def drain(self) -> Proc:
        yield from self._serial()
        yield self.env.timeout(self.k.call_s)
        # What a dispatch pass retrieved, then one wait() per task the manager knows has
        # ended (finished_ids()); tasks whose message is still unread stay for next time.
        n, self.retrieved = self.retrieved, 0
        for _ in range(self.finished):
            n += yield from self.wait()
        yield self.env.timeout(self.k.take_s * n)
        return n


def simulate(
    tasks: int,
    concurrency: int,
    task_s: float,
    pp_s: float,
    policy: str,
    kind: str = "pool",
    costs: Costs | None = None,
    clock_s: float = 0.0,
    samples: Sequence[float] | None = None,
    pp_samples: Sequence[float] | None = None,
) -> float:
    """Predicted makespan (s): first submit to the last result post-processed.

    ``clock_s`` is the wall clock's fraction of a second at the start (Work Queue's wait
    timeouts end on whole seconds).  ``samples`` are measured per-task times on the worker
    (sent to ended, dispatch included), used in turn in submission order; without them every
    task takes ``task_s`` plus ``costs.latency_s``.  ``pp_samples`` are the measured
    post-process times, used in turn (else every one takes ``pp_s``).
    """
    if policy not in MODEL_POLICIES or kind not in KINDS:
        raise ValueError(f"unknown policy {policy!r} or kind {kind!r}")
    if policy == "wq-retrieve-many" and kind != "workqueue":
        raise ValueError("wq-retrieve-many is a Work Queue mode")
    k = costs or Costs()
    env = simpy.Environment()
    tq = _Tasks(task_s, k, samples)
    eng: _Pool | _WorkQueue = (
        _Pool(env, concurrency, tq, k)
        if kind == "pool"
        else _WorkQueue(env, concurrency, tq, k, policy, clock_s % 1.0)
    )
    end: list[float] = []
    pp = list(pp_samples or ()) or [pp_s]
    env.process(_app(env, eng, tasks, concurrency, pp, policy == "drain-many", end))
    env.run()
    return end[0]


def _app(
    env: simpy.Environment,
    eng: _Pool | _WorkQueue,
    n: int,
    c: int,
    pp: list[float],
    drain: bool,
    end: list[float],
) -> Proc:
    submitted = done = 0
    for _ in range(min(c, n)):
        yield from eng.submit()
        submitted += 1
    yield from eng.flush()
    while done < n:
        # As the workload does: drain-many first takes what is there, and waits only if
        # nothing is, then takes what finished meanwhile.
        got = (yield from eng.drain()) if drain else 0
        if not got:
            got = yield from eng.wait_one()
            if drain:
                got += yield from eng.drain()
        if drain:
            k = min(got, n - submitted)
            for _ in range(k):
                yield from eng.submit()
            submitted += k
            if k:
                yield from eng.flush()
        for _ in range(got):
            yield env.timeout(pp[done % len(pp)])
            done += 1
            if not drain and submitted < n:
                yield from eng.submit()
                submitted += 1
    end.append(env.now)


def ideal_makespan(tasks: int, concurrency: int, task_s: float, pp_s: float) -> float:
    """A lower bound for any policy with free dispatch: the workers' or the manager's work."""
    if tasks <= 0:
        return 0.0
    rounds = math.ceil(tasks / max(concurrency, 1))
    return max(rounds * task_s + pp_s, task_s + tasks * pp_s)
