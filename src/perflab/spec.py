"""What to measure: a RunSpec is everything one run needs, and it round-trips through JSON
so that the fresh measurement process receives exactly what the caller asked for."""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass, field
from typing import Any

#: The target name of a black-box command.
COMMAND_TARGET = "command"
#: Seconds a run's counted batch lasts when neither tasks nor a time is given.
DEFAULT_TIME_S = 5.0
#: The metric an engine target is decided on when none is named.
ENGINE_METRIC = "us_per_task"
#: A black-box command's when none is named: perflab measures the command itself (its wall
#: time; CPU and peak RSS beside it), as hyperfine does; a printed number is read only when
#: ``--metric`` names it.
COMMAND_METRIC = "wall_s"
#: The metrics perflab measures of a command itself (its process tree): the score of a
#: command whose output is not read, and of one that printed no score line.
SELF_MEASURED = frozenset(
    {"wall_s", "cpu_user_s", "cpu_sys_s", "utilization", "peak_rss_bytes", "ctx_switches",
     "write_bytes", "log_bytes"}
)  # fmt: skip


def default_metric(command: str | None) -> str:
    """The metric a run (and every verb deciding on runs) uses when none is named:
    ``wall_s`` for a black-box command, ``us_per_task`` for an engine target."""
    return COMMAND_METRIC if command is not None else ENGINE_METRIC


@dataclass(frozen=True)
class RunSpec:
    """One run of a target: frozen, so a stage hands on a new spec (``dataclasses.replace``)
    and never changes the one it was given.

    Either ``target`` names an engine (with ``workload``), or ``command`` is a black-box
    shell command (``target`` is then ``"command"``).  Exactly one of ``tasks`` and
    ``time_s`` sizes the measured batch (default: ``time_s`` = 5).
    """

    target: str = "parsl-htex"
    workload: str | None = "noop"
    tasks: int | None = None
    time_s: float | None = None
    warmup: int = 20
    #: Sub-batches the counted window is split into (``perflab precision``): each one's tasks
    #: and wall time go to ``measurement.window_splits``, for the within-window variance.
    window_splits: int = 1
    #: Workload parameters (``arg_bytes``, ``task_ms``, ``task_us`` ...).
    params: dict[str, Any] = field(default_factory=dict)
    #: Engine options (``workers``, ``prefetch_capacity`` ...); treatments add to these.
    engine_options: dict[str, Any] = field(default_factory=dict)
    parsl_config: str | None = None
    command: str | None = None
    #: Working directory of a black-box command (default: the caller's, when measured).
    cwd: str | None = None
    #: The run's metric ("": ``default_metric``, settled when the spec is built). For a
    #: command, a metric in ``SELF_MEASURED`` is perflab's own measurement; any other is
    #: read from the last line the command prints.
    metric: str = ""
    #: Whether a command's score is read from its last stdout line, as ``metric`` in that
    #: metric's unit (None: settled when the spec is built: read only where ``metric`` was
    #: named, as ``--metric NAME``; without it perflab measures the command itself).
    score_line: bool | None = None
    timeout_s: float = 300.0
    treatments: list[str] = field(default_factory=list)
    #: Extra environment for the measured process tree.
    env: dict[str, str] = field(default_factory=dict)
    #: Interpreter for engine targets (default: the one running perflab).
    python: str | None = None
    #: Requirements (``NAME==VERSION``, or a source tree's path) for a private cached venv
    #: of the run's interpreter (prepare/venvs.py); the target's other packages are pinned.
    packages: list[str] = field(default_factory=list)
    #: A bare interpreter to build that private venv from (an interpreter factor's).
    venv_base: str | None = None
    #: Command prefix for the measured process (e.g. ``["taskset", "-c", "0"]``).
    wrapper: list[str] = field(default_factory=list)
    #: Source patches: [{"package", "diff", "factor"}], applied to a private copy.
    patches: list[dict[str, str]] = field(default_factory=list)
    #: Source transforms: [{"factor", "package", "op", "module", ...}] (factors/transforms.py),
    #: applied at run time to the source the run's interpreter imports (or ``sources``).
    transforms: list[dict[str, Any]] = field(default_factory=list)
    #: Config factors that reach a command's own program through perflab's hook
    #: (``perflab/hook``): treatment -> the hook's operations on the objects it builds.
    hook: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    #: A developer's source tree per package (``--source DIR``): the run imports it instead.
    sources: dict[str, str] = field(default_factory=dict)
    #: Directory under which the run's private directory is made.
    run_root: str | None = None
    keep_run_dir: bool = False
    campaign: str | None = None
    #: Seconds between samples of the process tree (peak RSS).
    sample_interval_s: float = 0.2
    #: Profile kinds this run records (``timeline``, ``io``, ``syscalls``): a profiled run is
    #: slowed by its tracer and is never stored or compared with timing runs.
    profile: list[str] = field(default_factory=list)
    #: The user's explicit consent to a run whose servers admit anyone on this machine
    #: (``--allow-insecure``; e.g. HTEX unencrypted). Never set by a factor or catalog.
    allow_insecure: bool = False
    #: Shut the engine down cleanly after the last counted window (``--graceful``); by
    #: default the tree is killed once the result is written (nothing after it is recorded).
    graceful: bool = False
    #: ``--isolate``: the measured tree in a cgroup of its own (``on``, or ``cpus=LIST`` for
    #: its own cpuset too; run/isolate.py); None: where perflab's own processes are.
    isolate: str | None = None

    def __post_init__(self) -> None:
        if self.score_line is None:
            object.__setattr__(self, "score_line", self.command is not None and bool(self.metric))
        if not self.metric:
            object.__setattr__(self, "metric", default_metric(self.command))
        if self.command is not None and self.metric not in SELF_MEASURED:
            # only the command's print (or perflab's hook) can say its µs per task
            object.__setattr__(self, "score_line", True)
        if self.command is not None:
            # A black-box command is its own target; it runs where it was asked for, so a
            # campaign resumed from elsewhere still finds its files.
            object.__setattr__(self, "target", COMMAND_TARGET)
            object.__setattr__(self, "workload", None)
            if self.cwd is None:
                object.__setattr__(self, "cwd", os.getcwd())
        elif self.tasks is None and self.time_s is None:
            # the defaults are settled while the spec is built (frozen: no one else may)
            object.__setattr__(self, "time_s", DEFAULT_TIME_S)

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RunSpec:
        return cls(**data)
