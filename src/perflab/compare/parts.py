"""Measuring the variance parts of ``precision.Parts`` from runs, with intervals, and storing
them per machine, target, workload and metric (``precision.json`` beside the calibrations).

The runs are fresh runs of one spec whose counted window is split into m sub-batches of
``n_s`` tasks (``RunSpec.window_splits``). A one-way random-effects ANOVA on the logs of the
sub-batches' metric gives the parts: the mean square within runs estimates σ_w²/n_s, the one
between runs σ_w²/n_s + m σ_b², so σ_w² = n_s · MSW and σ_b² = (MSB − MSW)/m, floored at 0.
σ_w² has its χ² interval, σ_b² a percentile bootstrap over runs. S and c come from the
records' phases: S is a run's whole time but its counted window, c the window per task.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from perflab.analysis.stats import chi2_ppf, mean_ci, percentile_ci
from perflab.compare.calibrate import signature_key
from perflab.compare.pilot import Fitted, trusted
from perflab.compare.precision import WINDOW_BOUNDS, Parts
from perflab.errors import PerflabError
from perflab.files import read_keyed, write_keyed

#: Metrics whose value per sub-batch follows from its tasks and wall time.
SPLITTABLE = {
    "us_per_task": lambda tasks, wall: wall * 1e6 / tasks,
    "tasks_per_s": lambda tasks, wall: tasks / wall,
}
MIN_RUNS = 3
STORE = "precision store"  # how errors name the file
BOOTSTRAP = 1000


@dataclass
class RunParts:
    """One run: its sub-batches' metric values, their size, and where its time went."""

    values: list[float]
    sub_tasks: float
    fixed_s: float
    window_s: float
    tasks: int


@dataclass
class Measured:
    """Parts measured on this machine, with 95 % intervals (``*_ci``)."""

    parts: Parts
    runs: int
    splits: int
    sub_tasks: float
    fixed_ci: tuple[float, float]
    task_ci: tuple[float, float]
    between_ci: tuple[float, float]
    within_ci: tuple[float, float]
    key: str = ""
    signature: dict[str, Any] = field(default_factory=dict)
    measured_at: str = ""
    #: Pilot windows the parts were fitted from (``compare.pilot``; empty: sub-batch ANOVA),
    #: and the window they picked.
    windows: tuple[int, ...] = ()
    window: int | None = None
    #: What the fit was made from, per window (``compare.refine.Observation`` as dicts):
    #: a run's log-metric variance and its degrees of freedom, a run's mean wall time and
    #: its variance, the runs. Pooling later runs in refits from these.
    observations: list[dict[str, Any]] = field(default_factory=list)
    #: A command's parts (``compare.command_parts``): a run is its whole window, so a plan
    #: chooses runs only (its window is 1, and no spec is resized).
    whole_run: bool = False

    def bounds(self) -> tuple[int, int]:
        """The windows a plan may choose from: near the pilots' when there were pilots;
        the one whole run for a command."""
        if self.whole_run:
            return (1, 1)
        if not self.windows:
            return WINDOW_BOUNDS
        return trusted(self.windows)

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["parts"] = asdict(self.parts)
        return out

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Measured:
        d = dict(d)
        d["parts"] = Parts(**d["parts"])
        for k in ("fixed_ci", "task_ci", "between_ci", "within_ci", "windows"):
            d[k] = tuple(d.get(k, ()))
        return cls(**d)


def splittable(metric: str) -> None:
    """PerflabError unless ``metric``'s value per sub-batch follows from its tasks and wall
    time (``SPLITTABLE``); checked before any run, so a wrong ``--by`` runs nothing."""
    if metric not in SPLITTABLE:
        raise PerflabError(
            f"the within-window variance of {metric!r} cannot be split from a window's "
            f"sub-batches (can: {', '.join(SPLITTABLE)}; --windows fits any metric)"
        )


def from_record(rec: dict[str, Any], metric: str) -> RunParts | None:
    """A run record's (as a dict) parts, or None without window splits or phases."""
    m = rec.get("measurement") or {}
    splits, ph = m.get("window_splits"), m.get("phases") or {}
    splittable(metric)
    if not splits or not ph.get("total"):
        return None
    values = [SPLITTABLE[metric](s["tasks"], s["wall_s"]) for s in splits]
    window = float(ph.get("window", 0.0)) + float(ph.get("estimates", 0.0))
    tasks = sum(int(s["tasks"]) for s in splits)
    return RunParts(values, tasks / len(splits), float(ph["total"]) - window, window, tasks)


def anova(groups: np.ndarray) -> tuple[float, float]:
    """(MSB/m-corrected between variance, within mean square) of an r × m array of logs:
    σ_b² = max(0, (MSB − MSW)/m) and MSW."""
    r, m = groups.shape
    means = groups.mean(axis=1)
    msw = float(((groups - means[:, None]) ** 2).sum() / (r * (m - 1)))
    msb = float(m * means.var(ddof=1)) if r > 1 else 0.0
    return max(0.0, (msb - msw) / m), msw


def estimate(runs: list[RunParts], seed: int = 0, boot: int = BOOTSTRAP) -> Measured:
    """The parts of a set of runs (equal splits), with 95 % intervals (σ_b²'s from ``boot``
    bootstrap resamples of the runs; none, nan bounds, with 0)."""
    if len(runs) < MIN_RUNS:
        raise PerflabError(f"measuring the parts needs at least {MIN_RUNS} runs (got {len(runs)})")
    m = min(len(r.values) for r in runs)
    if m < 2:
        raise PerflabError("each run needs a window split into at least 2 sub-batches")
    logs = np.log(np.array([r.values[:m] for r in runs], float))
    n_s = float(np.mean([r.sub_tasks for r in runs]))
    var_b, msw = anova(logs)
    df_w = logs.shape[0] * (m - 1)
    within_ci = (
        n_s * msw * df_w / chi2_ppf(0.975, df_w),
        n_s * msw * df_w / chi2_ppf(0.025, df_w),
    )
    rng = np.random.default_rng(seed)
    resampled = [anova(logs[rng.integers(len(runs), size=len(runs))])[0] for _ in range(boot)]
    fixed = np.array([r.fixed_s for r in runs])
    per_task = np.array([r.window_s / r.tasks for r in runs])
    parts = Parts(float(fixed.mean()), float(per_task.mean()), var_b, n_s * msw)
    return Measured(
        parts,
        len(runs),
        m,
        n_s,
        _t_ci(fixed),
        _t_ci(per_task),
        percentile_ci(resampled) if resampled else (math.nan, math.nan),
        within_ci,
    )


def from_pilot(fit: Fitted, runs: int) -> Measured:
    """The stored form of parts fitted from pilots at several windows, with what they were
    fitted from (a window's variance has one degree of freedom per A/A pair)."""
    obs = [
        {"tasks": n, "var": v, "df": k, "wall_s": w, "wall_var": wv, "runs": 2 * k}
        for n, v, k, w, wv in zip(fit.windows, fit.var_run, fit.pairs, fit.walls,
                                  fit.wall_vars, strict=False)
    ]  # fmt: skip
    return Measured(fit.parts, runs, 1, 0.0, fit.fixed_ci, fit.task_ci, fit.between_ci,
                    fit.within_ci, windows=fit.windows, window=fit.window,
                    observations=obs)  # fmt: skip


def _t_ci(x: np.ndarray) -> tuple[float, float]:
    """The mean's 95 % t interval; the mean itself from one run (no width can be given)."""
    mean, lo, hi = mean_ci(x)
    return (mean, mean) if lo is None or hi is None else (lo, hi)


def parts_signature(sig: dict[str, Any]) -> dict[str, Any]:
    """A calibration signature without the window's size (which the plan chooses)."""
    return {k: v for k, v in sig.items() if k not in ("tasks", "time_s")}


def store_path(home: Path) -> Path:
    return home / "precision.json"


def save(measured: Measured, sig: dict[str, Any], home: Path) -> Path:
    sig = parts_signature(sig)
    measured.key = signature_key(sig)
    measured.signature = sig
    measured.measured_at = measured.measured_at or datetime.now(UTC).isoformat(timespec="seconds")
    return write_keyed(store_path(home), measured.key, measured.to_dict(), STORE)


def load(sig: dict[str, Any], home: Path) -> Measured | None:
    entry = read_keyed(store_path(home), STORE).get(signature_key(parts_signature(sig)))
    return None if entry is None else Measured.from_dict(entry)
