"""``compare``: run A and B interleaved until the gate decides, and say what B is.

A side is a RunSpec (anything a run can differ in: treatments, command, interpreter, package
versions in a private venv, a patch). Both sides are prepared (``Side.ready``: venv, trees,
environment) once, before the first run, and every run of a side reuses what was made; a
version that does not install fails the comparison before anything is measured.
"""

from __future__ import annotations

import dataclasses
import math
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from perflab.compare.robust import Robust, hodges_lehmann
from perflab.compare.stats import (
    HIGHER_IS_BETTER,
    Decision,
    location,
    look_levels,
    recommend_n,
)
from perflab.compare.stats import sequential as run_sequence
from perflab.errors import PerflabError
from perflab.prepare import Prepared, prepare
from perflab.run.measure import measure
from perflab.run.record import RunRecord
from perflab.spec import RunSpec

#: Derived metrics the gate can decide on besides the run record's own.
DERIVED = {
    "cpu_us_per_task": lambda r: (
        (r.cpu_user_s + r.cpu_sys_s) * 1e6 / r.tasks
        if r.tasks and r.cpu_user_s is not None and r.cpu_sys_s is not None
        else None
    ),
}
#: Runs per side when no calibration says better.
DEFAULT_MAX_RUNS = 10
DEFAULT_MIN_RUNS = 4


@dataclass
class Side:
    """One side of a comparison: its spec, what its runs recorded, and (once ``ready``) the
    ``Prepared`` spec every run of it reuses."""

    label: str
    spec: RunSpec
    records: list[RunRecord] = field(default_factory=list)
    values: list[float] = field(default_factory=list)
    prepared: Prepared | None = field(default=None, repr=False, compare=False)

    def ready(self, make: Callable[[RunSpec], Prepared] | None = None) -> Prepared:
        """This side made ready to run: prepared by ``make`` (default ``prepare``: its venv,
        transformed and patched trees, environment) on the first call, and the same
        ``Prepared`` for every later call, so a comparison prepares each side once, not per
        run. ``spec`` becomes the spec as it runs (in its venv)."""
        if self.prepared is None:
            self.prepared = (make or prepare)(self.spec)
            self.spec = self.prepared.spec
        return self.prepared

    def resize(self, tasks: int | None, time_s: float | None) -> None:
        """A new run size (``compare --precision``'s planned window) for the spec and for
        what was prepared: a venv, a tree or an environment does not depend on it."""
        self.spec = dataclasses.replace(self.spec, tasks=tasks, time_s=time_s)
        if self.prepared is not None:
            sized = dataclasses.replace(self.prepared.spec, tasks=tasks, time_s=time_s)
            self.prepared = dataclasses.replace(self.prepared, spec=sized)

    def summary(self) -> dict[str, Any]:
        out: dict[str, Any] = {"label": self.label, "n": len(self.values)}
        out["treatments"] = self.spec.treatments
        out["command"] = self.spec.command
        out["env"] = self.records[0].env if self.records else {}
        if self.values:
            out.update(location(self.values), values=self.values)
            if len(self.values) > 1:
                out["cv"] = statistics.stdev(self.values) / statistics.fmean(self.values)
        return out


@dataclass
class Comparison:
    a: Side
    b: Side
    metric: str
    decision: Decision | None
    looks: list[dict[str, Any]]
    n_min: int
    n_max: int
    n_source: str
    identical: bool
    alpha: float = 0.01
    paired: bool = True
    failed: RunRecord | None = None
    elapsed_s: float = 0.0
    notes: list[str] = field(default_factory=list)
    #: ``compare --precision``: the plan, and what was reached (compare/precision.py).
    precision: dict[str, Any] | None = None
    #: ``compare --max-time`` ended undecided: this node is too noisy for ±threshold.
    too_noisy: str | None = None

    @property
    def test(self) -> str:
        """The test that decided: the paired t-test on neighbouring runs, or Welch's."""
        return "paired t" if self.paired else "Welch t"

    @property
    def regression(self) -> bool:
        return self.failed is not None or (
            self.decision is not None and self.decision.verdict == "slower"
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "metric": self.metric,
            "higher_is_better": self.metric in HIGHER_IS_BETTER,
            "a": self.a.summary(),
            "b": self.b.summary(),
            "decision": self.decision.to_dict() if self.decision else None,
            "verdict": "failed"
            if self.failed
            else (self.decision.verdict if self.decision else None),
            "regression": self.regression,
            "looks": self.looks,
            "n_min": self.n_min,
            "n_max": self.n_max,
            "n_source": self.n_source,
            "alpha": self.alpha,
            "test": self.test,
            "identical": self.identical,
            "failed": None
            if self.failed is None
            else {"run_id": self.failed.run_id, "error": self.failed.error},
            "elapsed_s": self.elapsed_s,
            "notes": self.notes,
            "precision": self.precision,
            "too_noisy": self.too_noisy,
            "robust": None if (r := self.robust()) is None else r.to_dict(),
        }

    def robust(self) -> Robust | None:
        """The paired Hodges–Lehmann estimate of B/A at ``alpha`` (None unpaired or under 2
        pairs): what outliers of a busy node move far less than the paired t's mean."""
        if not self.paired:
            return None
        return hodges_lehmann(self.a.values, self.b.values, self.alpha)


def metric_value(record: RunRecord, metric: str) -> float | None:
    if metric in DERIVED:
        return DERIVED[metric](record)
    value = getattr(record, metric, None)
    return None if value is None else float(value)


def same_spec(a: RunSpec, b: RunSpec) -> bool:
    """Whether two specs would run the same thing (ignoring where run directories go)."""
    ignore = {"run_root", "keep_run_dir", "campaign"}
    da = {k: v for k, v in dataclasses.asdict(a).items() if k not in ignore}
    db = {k: v for k, v in dataclasses.asdict(b).items() if k not in ignore}
    return da == db


def run_compare(
    a: Side,
    b: Side,
    metric: str,
    threshold: float = 0.05,
    alpha: float = 0.01,
    n_min: int = DEFAULT_MIN_RUNS,
    n_max: int = DEFAULT_MAX_RUNS,
    n_source: str = "default",
    sequential: bool = True,
    progress: Callable[[str, int, int, Side], None] | None = None,
    paired: bool = True,
    max_time_s: float | None = None,
) -> Comparison:
    """Measure A and B in ABBA order, looking at block ends (from ``n_min`` runs per side, at
    the levels of ``look_levels``) until decided or ``n_max``; without ``sequential`` only at
    n_max. ``paired`` tests A's i-th run against B's i-th, its neighbour in the ABBA order.

    With ``max_time_s`` (``compare --max-time``) an undecided comparison does not stop at
    ``n_max``: it goes on, at ``busy.long_looks``' looks past it (the look at n_max
    keeps the last look's share of alpha, and all add up to alpha), until decided or out of
    time, and then says this node is too noisy for ±``threshold`` (``too_noisy``)."""
    from perflab.compare import busy

    if not 0 < threshold < 1:
        raise PerflabError(f"--min-effect must be between 0 and 1 (got {threshold})")
    if not 0 < alpha < 0.5:
        raise PerflabError(f"--alpha must be between 0 and 0.5 (got {alpha})")
    if n_max < 2:
        raise PerflabError(f"--runs must be at least 2 per side (got {n_max})")
    if max_time_s is not None and not (sequential and max_time_s > 0):
        raise PerflabError("--max-time lets an undecided comparison go on past --runs: it "
                           "takes a time > 0 and no --fixed")  # fmt: skip
    levels = look_levels(n_min, n_max, alpha, sequential)
    if max_time_s is not None:
        levels = busy.long_looks(n_min, n_max, busy.MOST_PAIRS, alpha)
        n_source = f"{n_source}; undecided, on until --max-time {busy.duration(max_time_s)}"
    for side in (a, b):  # before the first run: a side that does not build measures nothing
        side.ready()
    cmp = Comparison(
        a,
        b,
        metric,
        None,
        [],
        min(n_min, n_max),
        n_max,
        n_source,
        same_spec(a.spec, b.spec),
        alpha,
        paired,
    )
    t0 = time.monotonic()

    def runner(side: Side) -> Callable[[], float]:
        def run() -> float:
            if progress:
                progress(side.label, len(a.values) + len(b.values) + 1, 2 * n_max, side)
            rec = measure(side.ready())
            side.records.append(rec)
            value = metric_value(rec, metric) if rec.status == "ok" else None
            if value is None or not value > 0 or not math.isfinite(value):
                raise _RunFailed(rec if rec.status != "ok" else _no_metric(rec, metric))
            side.values.append(value)
            return value

        return run

    def on_look(decision: Decision) -> None:
        cmp.decision = decision
        cmp.looks.append({"n": decision.n_a, **decision.to_dict()})

    def out_of_time() -> bool:
        # another pair at the mean run time so far would overrun the budget
        spent, done = time.monotonic() - t0, len(a.values) + len(b.values)
        return max_time_s is not None and spent + 2 * spent / max(1, done) > max_time_s

    try:
        run_sequence(
            runner(a), runner(b), n_min, n_max, threshold, alpha, metric in HIGHER_IS_BETTER,
            paired, early_stop=sequential, on_look=on_look, levels=levels,
            out_of_time=out_of_time if max_time_s is not None else None,
        )  # fmt: skip
    except _RunFailed as stop:
        cmp.failed = stop.record
    cmp.elapsed_s = time.monotonic() - t0
    if cmp.decision is not None and not cmp.decision.decided:
        cmp.notes.append(_noise_note(a.values, b.values, threshold, levels[n_max], paired))
        if max_time_s is not None and cmp.failed is None:
            cmp.too_noisy = busy.too_noisy(
                threshold, max_time_s, busy.cv_of(a.values, b.values),
                busy.load_of([*a.records, *b.records]),
            )  # fmt: skip
            cmp.notes.append(cmp.too_noisy)
    cmp.notes.extend(busy_notes(cmp))
    return cmp


def busy_notes(cmp: Comparison) -> list[str]:
    """What a comparison says about the node it ran on: the paired estimate robust to
    outliers (where paired) and the load its runs recorded."""
    from perflab.compare.busy import load_of, load_text

    robust = cmp.robust()
    out = [robust.line()] if robust is not None else []
    return [*out, f"measured at {load_text(load_of([*cmp.a.records, *cmp.b.records]))}"]


class _RunFailed(Exception):
    """A run failed or gave no usable value: the comparison stops on it."""

    def __init__(self, record: RunRecord) -> None:
        super().__init__(record.error)
        self.record = record


def _noise_note(
    a: list[float], b: list[float], threshold: float, level: float, paired: bool
) -> str:
    """Why it stayed inconclusive: the noise measured, and the runs it would take."""
    la, lb = np.log(a), np.log(b)
    if paired:
        sigma, what = float(np.std(lb - la, ddof=1)), "a pair's log difference"
    else:
        sigma, what = float(np.sqrt((np.var(la, ddof=1) + np.var(lb, ddof=1)) / 2)), "log of a run"
    need = recommend_n(sigma, 2 * threshold, level, paired=paired)
    return (
        f"inconclusive at {len(a)} runs per side: the sd of {what} is {sigma:.3f} here, so "
        f"telling a {2 * threshold:.0%} change takes about {need} runs per side "
        "(see `perflab precision --gate`; `--metric cpu_us_per_task` is often far less noisy)"
    )


def _no_metric(rec: RunRecord, metric: str) -> RunRecord:
    why = f"run {rec.run_id} has no positive value of metric {metric!r}"
    return dataclasses.replace(rec, error=why)
