"""Calibration: this machine's run-to-run noise and the gate's false-alarm rate on it.

``calibrate`` measures N identical runs (an A/A experiment), then replays the sequential gate
on that noise: each simulated comparison takes a contiguous window of the runs in time order
(so drift and load swings are kept as they happened), labels them ABBA…, and asks the gate
(paired, as ``compare`` runs it: the noise that counts is a pair's log difference).
The share of "faster"/"slower" verdicts is the false-alarm rate; the same windows with B made
``effect`` slower give the detection rate. The result is stored and used by ``compare`` to
choose how many runs to make.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import socket
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from perflab.analysis.stats import clopper_pearson
from perflab.compare.gate import DEFAULT_MAX_RUNS
from perflab.compare.stats import (
    HIGHER_IS_BETTER,
    look_levels,
    pair_sd,
    recommend_n,
    sequential,
)
from perflab.errors import PerflabError
from perflab.files import read_keyed, write_keyed
from perflab.spec import RunSpec

#: Fewest and most runs per side a calibration recommends.
N_FLOOR, N_CAP = 4, 40
MIN_CALIBRATION_RUNS = 8
STORE = "calibration store"  # how errors name the file


@dataclass
class Calibration:
    key: str
    signature: dict[str, Any]
    metric: str
    values: list[float]
    sigma_log: float
    cv: float
    lag1: float
    threshold: float
    alpha: float
    effect: float
    recommended_n: int
    simulations: int
    false_alarms: int
    false_alarm_rate: float
    false_alarm_ci: tuple[float, float]
    detections: int
    detection_rate: float
    detection_ci: tuple[float, float]
    measured_at: str = ""
    verdicts: dict[str, int] = field(default_factory=dict)
    #: sd of the log difference of neighbouring runs: the noise the paired gate sees.
    sigma_pair_log: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def signature(spec: RunSpec, metric: str) -> dict[str, Any]:
    """What makes two calibrations comparable: the thing measured, its size, the machine."""
    return {
        "target": spec.target if spec.command is None else "command",
        "workload": spec.workload if spec.command is None else None,
        "command": spec.command,
        "tasks": spec.tasks,
        "time_s": spec.time_s,
        "params": spec.params,
        "engine_options": spec.engine_options,
        "treatments": sorted(spec.treatments),
        "python": spec.python,
        "packages": sorted(spec.packages),
        "metric": metric,
        "host": socket.gethostname(),
        "cores": os.cpu_count(),
    }


def signature_key(sig: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(sig, sort_keys=True, default=str).encode()).hexdigest()[:16]


def noise(values: list[float]) -> tuple[float, float, float]:
    """(sd of the logs, coefficient of variation, lag-1 autocorrelation of the logs)."""
    x = np.asarray(values, float)
    logs = np.log(x)
    sigma = float(logs.std(ddof=1))
    cv = float(x.std(ddof=1) / x.mean())
    lag1 = float(np.corrcoef(logs[:-1], logs[1:])[0, 1]) if len(x) > 2 and sigma > 0 else 0.0
    return sigma, cv, lag1 if math.isfinite(lag1) else 0.0


def choose_n(sigma_pair_log: float, effect: float, alpha: float, n_min: int) -> int:
    """Runs per side that detect ``effect`` with 80 % power at the paired gate's last look."""
    n = N_FLOOR
    for _ in range(5):  # the last look's level depends on n through the number of looks
        level = look_levels(n_min, n, alpha)[n]
        n = min(N_CAP, max(N_FLOOR, recommend_n(sigma_pair_log, effect, level, paired=True)))
    return n


def simulate(
    values: list[float],
    n_min: int,
    n_max: int,
    threshold: float,
    alpha: float,
    effect: float,
    higher_is_better: bool,
    sims: int = 200,
    seed: int = 0,
) -> tuple[dict[str, int], int]:
    """Replay the gate on windows of the measured runs: verdict counts of A/A, and how many
    comparisons flag B as slower when B is made ``effect`` worse."""
    rng = np.random.default_rng(seed)
    x = np.asarray(values, float)
    counts: dict[str, int] = {}
    detected = 0
    worse = 1 / (1 + effect) if higher_is_better else 1 + effect
    for _ in range(sims):
        start = int(rng.integers(len(x)))
        for mult in (1.0, worse):
            # consecutive measured runs go to A and B in the gate's own ABBA order
            pos = [start]

            def draw(factor: float, pos: list[int] = pos) -> Callable[[], float]:
                def f() -> float:
                    pos[0] += 1
                    return float(x[(pos[0] - 1) % len(x)]) * factor

                return f

            dec, _, _ = sequential(
                draw(1.0), draw(mult), n_min, n_max, threshold, alpha, higher_is_better
            )
            if mult == 1.0:
                counts[dec.verdict] = counts.get(dec.verdict, 0) + 1
            elif dec.verdict == "slower":
                detected += 1
    return counts, detected


def calibrate_values(
    sig: dict[str, Any],
    values: list[float],
    threshold: float = 0.05,
    alpha: float = 0.01,
    effect: float | None = None,
    n_min: int = 4,
    sims: int = 200,
) -> Calibration:
    """A calibration from measured A/A values (in time order) of ``sig['metric']``."""
    if len(values) < MIN_CALIBRATION_RUNS:
        raise PerflabError(
            f"calibration needs at least {MIN_CALIBRATION_RUNS} ok runs (got {len(values)})"
        )
    effect = 2 * threshold if effect is None else effect
    sigma, cv, lag1 = noise(values)
    sigma_pair = pair_sd(values)
    n = choose_n(sigma_pair, effect, alpha, n_min)
    hib = sig["metric"] in HIGHER_IS_BETTER
    counts, detected = simulate(values, n_min, n, threshold, alpha, effect, hib, sims)
    false = counts.get("faster", 0) + counts.get("slower", 0)
    return Calibration(
        key=signature_key(sig),
        signature=sig,
        metric=sig["metric"],
        values=list(values),
        sigma_log=sigma,
        cv=cv,
        lag1=lag1,
        threshold=threshold,
        alpha=alpha,
        effect=effect,
        recommended_n=n,
        simulations=sims,
        false_alarms=false,
        false_alarm_rate=false / sims,
        false_alarm_ci=clopper_pearson(false, sims),
        detections=detected,
        detection_rate=detected / sims,
        detection_ci=clopper_pearson(detected, sims),
        measured_at=datetime.now(UTC).isoformat(timespec="seconds"),
        verdicts=counts,
        sigma_pair_log=sigma_pair,
    )


def store_path(home: Path) -> Path:
    return home / "calibration.json"


def save(cal: Calibration, home: Path) -> Path:
    return write_keyed(store_path(home), cal.key, cal.to_dict(), STORE)


def load(sig: dict[str, Any], home: Path) -> Calibration | None:
    """The stored calibration for this signature, if any."""
    entry = read_keyed(store_path(home), STORE).get(signature_key(sig))
    if entry is None:
        return None
    entry["false_alarm_ci"] = tuple(entry["false_alarm_ci"])
    entry["detection_ci"] = tuple(entry["detection_ci"])
    return Calibration(**entry)


def runs_per_side(spec: RunSpec, metric: str, home: Path) -> tuple[int, str]:
    """Most runs per side of a comparison on ``spec``, and where the number comes from:
    what ``perflab calibrate`` stored for this benchmark, else the gate's default."""
    found = load(signature(spec, metric), home)
    if found is not None:
        return found.recommended_n, f"calibration of {found.measured_at}"
    return DEFAULT_MAX_RUNS, "default (not calibrated: see `perflab precision --gate`)"
