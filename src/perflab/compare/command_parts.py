"""``--precision`` for a user's command: the run is its whole window.

An engine target has a window to size (tasks per run); a command does not: each run is one
fresh process tree doing all its work, so the only thing a plan chooses is how many runs. The
parts are then σ_b² (the variance of one run's log metric; σ_w² is 0) and S (a run's whole
wall time; c is 0), measured by an A/A pilot of the command in fresh processes: ``pairs``
pairs of consecutive runs, v = mean(d²)/2 over their log differences (k pairs, k degrees of
freedom: the mean of d is zero for A/A), with the χ² interval of v and the t interval of S.
They are stored per command and environment (``command_signature``: the command string and a
hash of what reaches its process), so the next plan for it needs no pilot.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Callable
from typing import Any

import numpy as np

from perflab.analysis.stats import mean_ci, t_ppf
from perflab.compare import busy
from perflab.compare import parts as mp
from perflab.compare.calibrate import signature
from perflab.compare.pilot import chi2_ci
from perflab.compare.precision import Parts
from perflab.errors import PerflabError
from perflab.spec import RunSpec

#: A/A pairs of the pilot a command's first plan is made from.
PILOT_PAIRS = 8
#: A command's "window": one whole run (the plan's ``tasks`` is this, and no spec is resized).
WHOLE_RUN = 1


def environment_hash(spec: RunSpec) -> str:
    """A hash of what reaches the command's process besides its string: its working
    directory, extra environment, wrapper, treatments' hook operations and source trees.
    perflab's own per-run variables (``PERFLAB_*``: run directories) are left out."""
    env = {k: v for k, v in sorted(spec.env.items()) if not k.startswith("PERFLAB_")}
    what = [spec.cwd, env, spec.wrapper, spec.hook, spec.sources, spec.patches, spec.transforms]
    payload = json.dumps(what, sort_keys=True, default=str)
    return hashlib.sha256(payload.encode()).hexdigest()[:16]


def command_signature(spec: RunSpec, metric: str) -> dict[str, Any]:
    """The key of a command's stored parts: ``calibrate.signature`` (the command string,
    treatments, interpreter, packages, metric, machine) and the environment's hash."""
    return {**signature(spec, metric), "environment": environment_hash(spec)}


def fit(values: list[float], walls: list[float]) -> mp.Measured:
    """The parts of a command from its A/A pilot: consecutive runs are a pair (an unpaired
    last run is left out). Bad input below 2 pairs or with a value that is not > 0."""
    k = len(values) // 2
    if k < 2:
        raise PerflabError(f"a command's pilot needs at least 2 A/A pairs (got {k})")
    x = np.asarray(values[: 2 * k], float)
    if not np.all(np.isfinite(x) & (x > 0)):
        raise PerflabError("a command's pilot gave a metric value that is not > 0")
    d = np.diff(np.log(x).reshape(k, 2), axis=1).ravel()
    var = float(np.mean(d**2)) / 2.0
    w = np.asarray(walls, float)
    fixed, lo, hi = mean_ci(w)
    fixed_ci = (fixed, fixed) if lo is None or hi is None else (max(0.0, lo), hi)
    parts = Parts(fixed_s=fixed, task_s=0.0, var_between=var, var_within=0.0)
    wall_var = float(np.var(w, ddof=1)) if len(w) > 1 else 0.0
    obs = [{"tasks": WHOLE_RUN, "var": var, "df": k, "wall_s": fixed, "wall_var": wall_var,
            "runs": len(values)}]  # fmt: skip
    return mp.Measured(parts, len(values), 1, 0.0, fixed_ci, (0.0, 0.0), chi2_ci(var, k),
                       (0.0, 0.0), windows=(WHOLE_RUN,), window=WHOLE_RUN, observations=obs,
                       whole_run=True)  # fmt: skip


def refit(var: float, df: float, wall: float, wall_var: float, runs: int) -> mp.Measured:
    """A command's parts from one pooled point (``compare --update-parts``: the pilot's
    pairs and each comparison's, sums of squares added by ``refine.merge``): σ_b² with its χ²
    interval on ``df`` degrees of freedom, S with the t interval of ``runs`` wall times."""
    half = t_ppf(0.975, runs - 1) * math.sqrt(wall_var / runs) if runs > 1 else 0.0
    parts = Parts(fixed_s=wall, task_s=0.0, var_between=var, var_within=0.0)
    obs = [{"tasks": WHOLE_RUN, "var": var, "df": df, "wall_s": wall, "wall_var": wall_var,
            "runs": runs}]  # fmt: skip
    return mp.Measured(parts, runs, 1, 0.0, (max(0.0, wall - half), wall + half), (0.0, 0.0),
                       chi2_ci(var, df), (0.0, 0.0), windows=(WHOLE_RUN,), window=WHOLE_RUN,
                       observations=obs, whole_run=True)  # fmt: skip


def pilot(
    run: Callable[[], tuple[float, float]], pairs: int = PILOT_PAIRS,
    say: Callable[[str], None] | None = None,
) -> mp.Measured:  # fmt: skip
    """``pairs`` A/A pairs of ``run`` (one fresh run of the command → its metric value and
    its whole wall time), after one run not kept, fitted by ``fit``."""
    values: list[float] = []
    walls: list[float] = []
    # the first run of a perflab process also starts its fork server: a wall time no run
    # of the comparison has, which the plan's time would carry (it is run, not kept)
    run()
    for i in range(2 * pairs):
        if say and i % 2 == 0:
            say(f"[dim]pilot: A/A pair {i // 2 + 1}/{pairs} of the command[/dim]")
        value, wall = run()
        values.append(value)
        walls.append(wall)
    return fit(values, walls)


def load(spec: RunSpec, metric: str, home: Any) -> mp.Measured | None:
    """The stored parts of this command in this environment, or None."""
    return mp.load(command_signature(spec, metric), home)


def save(found: mp.Measured, spec: RunSpec, metric: str, home: Any) -> Any:
    """Store a command's parts under ``command_signature``; the file's path."""
    return mp.save(found, command_signature(spec, metric), home)


#: One run's CV from paired runs (``busy.cv_of``), named here where the pilot's parts are.
cv_of = busy.cv_of
