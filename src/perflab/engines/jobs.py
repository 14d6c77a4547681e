"""What job engines (``shell``, ``saga``) share: tasks are executables, not callables.

A job engine runs each counted batch itself (``BatchEngine.run_batch``): it submits ``n`` copies
of the workload's command line and, with ``until=submitted`` (jobs/s is then
the submission rate), the batch ends when the job system has confirmed every submission;
with ``until=done`` it ends when every job has finished. Jobs still running when the window
closes are waited for in ``settle()``, outside the window; a job that failed fails the run.
"""

from __future__ import annotations

from typing import Any, ClassVar

from perflab.engines.base import BatchEngine
from perflab.errors import PerflabError
from perflab.options import Opt

UNTIL = ("submitted", "done")


class JobFailed(RuntimeError):
    """A submitted job failed: the run is recorded as failed with this message."""


def choice(engine: str, options: dict[str, Any], key: str, allowed: tuple[str, ...]) -> str:
    value = str(options[key])
    if value not in allowed:
        raise PerflabError(
            f"engine {engine!r}: option {key}={value!r} is not one of {', '.join(allowed)}"
        )
    return value


def count(engine: str, options: dict[str, Any], key: str, low: int = 1) -> int:
    try:
        value = int(str(options[key]))
    except ValueError:
        raise PerflabError(
            f"engine {engine!r}: option {key}={options[key]!r} is not an integer"
        ) from None
    if value < low:
        raise PerflabError(f"engine {engine!r}: option {key} must be >= {low} (got {value})")
    return value


class JobEngine(BatchEngine):
    """Base of engines whose tasks are command lines (see the module docstring)."""

    runs_commands = True
    options: ClassVar[dict[str, Opt]] = {
        **BatchEngine.options,
        "until": Opt(
            own_check=True,
            default="submitted",
            help="When a batch ends: submitted (every job confirmed) or done (every job ended).",
        ),
    }

    @classmethod
    def resolve_options(cls, options: dict[str, Any]) -> dict[str, Any]:
        merged = super().resolve_options(options)
        merged["until"] = choice(cls.name, merged, "until", UNTIL)
        return merged


def check_words(engine: str, argv: list[str], why: str) -> list[str]:
    """``argv`` if none of its words holds a control character (C0 or DEL), else a
    PerflabError naming it and ``why`` the engine cannot carry one: a job system that reads
    jobs as lines, or through a terminal, would take part of the word for a command."""
    for word in argv:
        bad = next((c for c in word if ord(c) < 0x20 or ord(c) == 0x7F), None)
        if bad is not None:
            raise PerflabError(
                f"engine {engine!r}: job argument {word!r} holds a control character "
                f"({bad!r}): {why}"
            )
    return argv


def batch_result(
    n: int, t0: float, submitted: float, first: float | None, end: float
) -> dict[str, Any]:
    """The child's batch record from perf_counter readings."""
    return {
        "tasks": n,
        "wall_s": end - t0,
        "submit_s": submitted - t0,
        "first_result_s": (first if first is not None else end) - t0,
    }


def shares(n: int, k: int) -> list[int]:
    """``n`` tasks dealt over ``k`` submitters as evenly as possible."""
    return [n // k + (1 if i < n % k else 0) for i in range(k)]
