"""An atlas's definition: ``DIR/perflab.toml`` with an ``[atlas]`` table (the clone, the
package, the axis) and one ``[benchmark.NAME]`` table per benchmark, in the project file's
vocabulary (target, workload, tasks, command, metric, precision, alpha, engine_config, runs,
package, repo). Written by ``init``/``add``; read by the project file's loader, which checks
every table and names the file:line of what it refuses."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from perflab.errors import PerflabError
from perflab.files import atomic_write, check_name
from perflab.spec import COMMAND_TARGET, RunSpec

FILE = "perflab.toml"
AXES = ("commits", "releases", "both")
BENCH_KEYS = ("target", "workload", "tasks", "command", "metric", "precision", "alpha",
              "engine_config", "runs", "package", "repo")  # fmt: skip


@dataclass(frozen=True)
class Benchmark:
    """One benchmark of the atlas: an engine target with a workload, or a command."""

    name: str
    target: str = COMMAND_TARGET
    workload: str | None = None
    tasks: int | None = None
    command: str | None = None
    metric: str = "wall_s"
    #: Runs per measured point (the series); the gate's most runs per side is twice this.
    runs: int = 4
    precision: str | None = None
    alpha: float = 0.05
    engine_config: str | None = None
    package: str | None = None
    repo: str | None = None

    def spec(self) -> RunSpec:
        """The run this benchmark makes at each point (before the point's tree is added)."""
        if self.command is not None:
            return RunSpec(target=COMMAND_TARGET, workload=None, command=self.command,
                           metric=self.metric)  # fmt: skip
        from perflab.run.record import METRICS

        # a derived metric (cpu_us_per_task) is computed from the record: the run itself
        # records its own metrics
        metric = self.metric if self.metric in METRICS else "us_per_task"
        return RunSpec(target=self.target, workload=self.workload, tasks=self.tasks,
                       metric=metric, parsl_config=self.engine_config)  # fmt: skip

    def table(self) -> dict[str, Any]:
        return {k: v for k, v in asdict(self).items() if k != "name" and v is not None}


@dataclass(frozen=True)
class Atlas:
    """The ``[atlas]`` table and the benchmarks."""

    repo: str
    package: str
    axis: str = "commits"
    since: str | None = None
    #: The newest commit watched (default: the clone's HEAD, as it moves).
    until: str | None = None
    #: Measure every n-th first-parent commit (and the newest); bisection finds the rest.
    every: int = 1
    build: str = "tree"
    min_effect: float = 0.05
    alpha: float = 0.05
    #: Where the runs execute: a campaign runner's name (``local``, ``slurm``) and its config.
    runner: str | None = None
    runner_config: str | None = None
    benchmarks: dict[str, Benchmark] = field(default_factory=dict)

    def settings(self) -> dict[str, Any]:
        return {k: v for k, v in asdict(self).items() if k != "benchmarks" and v is not None}


def _value(v: Any) -> str:
    # a JSON string or number is a valid TOML basic string or number
    return json.dumps(v) if not isinstance(v, bool) else str(v).lower()


def render(atlas: Atlas) -> str:
    """The project file's text."""
    out = ["# perflab atlas: `perflab atlas update DIR` measures what is new (docs/atlas.md)",
           "[atlas]"]  # fmt: skip
    out += [f"{k} = {_value(v)}" for k, v in atlas.settings().items()]
    for name, b in atlas.benchmarks.items():
        out += ["", f"[benchmark.{name}]"] + [f"{k} = {_value(v)}" for k, v in b.table().items()]
    return "\n".join(out) + "\n"


def write(dir_: Path, atlas: Atlas) -> Path:
    return atomic_write(dir_ / FILE, render(atlas))


def load(dir_: Path) -> Atlas:
    """The atlas defined in ``DIR/perflab.toml``, read by the project file's own loader
    (``perflab.project.load_project``: the ``[atlas]`` table and each ``[benchmark.NAME]``
    checked there); a PerflabError naming the file and line if it is missing or malformed."""
    from perflab.project import load_project

    path = Path(dir_) / FILE
    if not path.is_file():
        raise PerflabError(f"{dir_}: no atlas here (no {FILE}; make one with atlas init)")
    proj = load_project(path)
    table = proj.foreign.get("atlas", {})
    missing = [k for k in ("repo", "package") if k not in table]
    if missing:
        raise PerflabError(f"{path}: no [atlas] table with repo and package "
                           f"(missing: {', '.join(missing)})")  # fmt: skip
    atlas = Atlas(**{k: s.value for k, s in table.items()})
    if atlas.axis not in AXES:
        raise PerflabError(f"{table['axis'].source}: axis {atlas.axis!r} is not one of "
                           f"{', '.join(AXES)}")  # fmt: skip
    if atlas.every < 1:
        raise PerflabError(f"{table['every'].source}: every must be at least 1")
    benches = {}
    for name in proj.benchmarks():
        got = proj.resolved(name)
        for key, setting in got.items():
            if key not in BENCH_KEYS:
                raise PerflabError(f"{setting.source}: {key} is not a key of an atlas benchmark "
                                   f"(known: {', '.join(BENCH_KEYS)})")  # fmt: skip
        benches[name] = Benchmark(name=name, **{k: s.value for k, s in got.items()})
    return replace(atlas, benchmarks=benches)


def benchmark(
    name: str,
    command: str | None,
    target: str | None,
    workload: str | None,
    metric: str | None,
    **more: Any,
) -> Benchmark:
    """A benchmark from the command line: a command, or a target with a workload."""
    check_name(name, "benchmark")
    if (command is None) == (target is None):
        raise PerflabError(f"benchmark {name}: give --command, or --target with --workload")
    if target is not None and workload is None:
        raise PerflabError(f"benchmark {name}: --target {target} needs --workload")
    kept = {k: v for k, v in more.items() if v is not None}
    if command is not None:
        return Benchmark(name, command=command, metric=metric or "wall_s", **kept)
    return Benchmark(name, target=str(target), workload=workload,
                     metric=metric or "us_per_task", **kept)  # fmt: skip
