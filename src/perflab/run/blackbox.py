"""The black-box command target's score. By default perflab measures the command itself
(wall time, CPU, peak RSS: ``spec.SELF_MEASURED``) and never reads its output; only when
``--metric NAME`` names a metric is the command's last line of stdout read as NAME, in
NAME's unit (``record.METRIC_UNITS``: ``wall_s`` in seconds, ``us_per_task`` in µs)."""

from __future__ import annotations

import json
from typing import Any

from perflab.run.record import METRICS, metric_problem, metric_unit


def measured_score(metric: str, why: str = "the command's output is not read") -> str:
    """``measurement.score_from`` of a command measured by perflab itself."""
    return f"{metric}, measured by perflab ({why})"


def printed_score(metric: str) -> str:
    """``measurement.score_from`` of a score read from the command's output as ``metric``."""
    return f"{metric}, read from the command's last stdout line (in {metric_unit(metric)})"


class ScoreError(ValueError):
    """The command ran but did not print a usable score."""


def parse_score(stdout: str, metric: str) -> dict[str, float]:
    """Read the last non-empty stdout line: a bare number (the ``metric``), or a JSON object
    whose ``metric`` key is a number (its other known metric keys are kept too)."""
    lines = [ln.strip() for ln in stdout.splitlines() if ln.strip()]
    if not lines:
        raise ScoreError("the command printed nothing on stdout; its last line must be the score")
    last = lines[-1]
    try:
        value = float(last)
    except ValueError:
        value = None
    if value is not None:
        return {metric: _checked(metric, value)}
    try:
        obj: Any = json.loads(last)
    except (ValueError, RecursionError):
        # not only JSONDecodeError: an integer of over 4,300 digits is a plain ValueError,
        # nesting past the recursion limit a RecursionError (issue 43)
        raise ScoreError(
            f"last stdout line {last[:120]!r} is neither a number nor a JSON object"
        ) from None
    if not isinstance(obj, dict) or metric not in obj:
        raise ScoreError(f"last stdout line is JSON without the metric key {metric!r}")
    out: dict[str, float] = {}
    for key in sorted({metric, *METRICS} & set(obj)):
        try:
            if isinstance(obj[key], bool):  # float(True) is 1.0: no score
                raise TypeError
            value = float(obj[key])
        except (TypeError, ValueError, OverflowError):
            raise ScoreError(
                f"metric {key!r} in the last stdout line is not a number: {repr(obj[key])[:80]}"
            ) from None
        out[key] = _checked(key, value)
    return out


def _checked(key: str, value: float) -> float:
    problem = metric_problem(key, value)
    if problem:
        raise ScoreError(f"score: {problem}")
    return value
