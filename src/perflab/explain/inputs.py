"""What ``perflab explain`` is asked, checked before anything is built or stored."""

from __future__ import annotations

import re

from perflab.compare.gate import DERIVED
from perflab.errors import PerflabError
from perflab.explain.plan import Setup
from perflab.run.measure import validate
from perflab.run.record import METRICS
from perflab.spec import RunSpec


def setup(
    package: str,
    a: str,
    b: str,
    base: RunSpec,
    runs: int = 6,
    metrics: list[str] | None = None,
    name: str | None = None,
    screen_runs: int = 0,
    alpha: float = 0.05,
    threshold: float = 0.05,
    screen_alpha: float = 0.1,
    modules: tuple[str, ...] = (),
    classes: tuple[str, ...] = (),
    safety: str = "opt-in",
    seed: int = 0,
) -> Setup:
    """The checked ``Setup`` of explaining ``a`` → ``b`` of ``package`` on ``base``:
    ``metrics`` default to the command's ``--metric`` (a command target) or us_per_task,
    the first decides; ``name`` defaults to ``explain-PACKAGE-A-B``."""
    validate(base)
    metrics = metrics or [base.metric if base.command else "us_per_task"]
    for m in metrics:
        if m not in METRICS and m not in DERIVED:
            raise PerflabError(f"unknown metric {m!r} for --by")
    if runs < 3:
        raise PerflabError(f"--runs must be at least 3 rounds (got {runs})")
    return Setup(
        name=name or re.sub(r"[^A-Za-z0-9_.-]", "_", f"explain-{package}-{a}-{b}"),
        package=package,
        a=a,
        b=b,
        base=base,
        metrics=metrics,
        runs=runs,
        screen_reps=screen_runs,
        alpha=alpha,
        threshold=threshold,
        screen_alpha=screen_alpha,
        modules=tuple(modules),
        classes=tuple(classes),
        safety=safety,
        seed=seed,
    )
