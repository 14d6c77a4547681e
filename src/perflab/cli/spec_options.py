"""The options that say what one run measures (shared by `run` and `campaign create`), and
the RunSpec they make."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from perflab.cli.app import Aliased, kv, kv_option, registry_option, resolved
from perflab.errors import PerflabError
from perflab.spec import RunSpec


def _engines() -> Any:
    from perflab.engines import ENGINES

    return ENGINES


def _workloads() -> Any:
    from perflab.workloads import WORKLOADS

    return WORKLOADS


#: ``--timeout S``: how long one run may take (its whole process tree is killed then).
timeout_option = click.option(
    "--timeout",
    "timeout_s",
    type=float,
    default=300.0,
    show_default=True,
    help="Seconds before the whole run's process tree is killed.",
)

RUN_OPTIONS = [
    registry_option(
        "--target",
        "-t",
        registry=_engines,
        default="parsl-htex",
        help="Engine (task system) to measure.",
    ),
    registry_option(
        "--workload", "-w", registry=_workloads, default="noop", help="What each task does."
    ),
    click.option(
        "--tasks", "-n", type=int, help="Run exactly N counted tasks (after the warm-up)."
    ),
    click.option(
        "--time",
        "time_s",
        type=float,
        help="Size the counted batch to take about SECONDS (parsl-perf's estimate "
        "mode); only the final batch counts. Default: 5 unless --tasks is given.",
    ),
    click.option(
        "--warmup",
        type=int,
        default=20,
        show_default=True,
        help="Uncounted warm-up tasks after the engine starts.",
    ),
    click.option(
        "--arg-bytes", type=int, help="noop: bytes of payload per task (parsl-perf --argsize)."
    ),
    click.option("--task-ms", type=float, help="sleep: milliseconds per task."),
    click.option("--task-us", type=float, help="cpu: microseconds of busy loop per task."),
    kv_option("--param", "params", "Any workload parameter (repeatable)."),
    click.option("--workers", type=int, help="Workers (per node for HTEX). Default: cores."),
    kv_option("--opt", "opts", "Engine option, e.g. prefetch_capacity=100 (repeatable)."),
    click.option(
        "--engine-config",
        "parsl_config",
        type=click.Path(),
        cls=Aliased,
        old=("--parsl-config",),
        help="The engine's config file, parsl-perf style (defines `config` or `fresh_config()`).",
    ),
    click.option(
        "--command",
        "-c",
        help="Black-box target: a shell command; perflab measures it (wall time, CPU, "
        "peak RSS) unless --metric names a number it prints.",
    ),
    click.option(
        "--metric",
        default=None,
        cls=Aliased,
        old=("--by",),
        help="The metric decided on and analysed. Default: us_per_task for an engine, wall_s "
        "(measured by perflab) for a --command; another name (e.g. us_per_task) is read from "
        "the command's last stdout line (a number, or JSON with that key), in its unit.",
    ),
    timeout_option,
    click.option(
        "--run-root", type=click.Path(), help="Where run directories go (default .perflab/runs)."
    ),
    click.option("--keep-run-dir", is_flag=True, help="Keep the run directory of ok runs too."),
    click.option(
        "--graceful",
        is_flag=True,
        help="Shut the engine down cleanly after the last counted window (default: the run's "
        "process tree is killed once its result is written; nothing after it is recorded).",
    ),
    click.option(
        "--allow-insecure",
        is_flag=True,
        help="Run even where a server would admit any local user (HTEX unencrypted: "
        "cfg_unencrypted, or a Parsl release without encryption). While it runs, anyone on "
        "this machine can run code as you; see docs/security.md.",
    ),
    click.option(
        "--catalog",
        "catalogs",
        multiple=True,
        type=click.Path(),
        help="Extra factor catalog (TOML), on top of the built-in one (repeatable).",
    ),
]

#: ``--isolate``: the measured process tree in a cgroup of its own (run/isolate.py).
RUN_OPTIONS.append(
    click.option(
        "--isolate",
        is_flag=False,
        flag_value="on",
        default=None,
        metavar="[cpus=LIST]",
        help="Measure in a cgroup of its own at 10× the CPU weight (cpus=0-1: also its own "
        "cpuset); needs root or a delegated cgroup (PERFLAB_CGROUP), else nothing runs.",
    )
)


def run_options(f: Callable[..., Any]) -> Callable[..., Any]:
    """Decorate a command with every option of RUN_OPTIONS."""
    for opt in reversed(RUN_OPTIONS):
        f = opt(f)
    return f


def factors_option(help: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """The required ``--factors A,B,C=LEVEL`` of the verbs that plan sets (campaign, tune),
    read with ``factor_names``."""
    return click.option("--factors", "factor_list", required=True, metavar="A,B,C=LEVEL", help=help)


def factor_names(text: str | None) -> list[str]:
    """A ``--factors`` value's names, in order (blanks between commas dropped)."""
    return [f.strip() for f in (text or "").split(",") if f.strip()]


def base_spec(o: dict[str, Any]) -> RunSpec:
    """A RunSpec from the RUN_OPTIONS values (``o`` is click's keyword arguments)."""
    params = kv(o["params"], "--param")
    for key in ("arg_bytes", "task_ms", "task_us"):
        if o[key] is not None:
            params[key] = o[key]
    engine_options = kv(o["opts"], "--opt")
    if o["workers"] is not None:
        engine_options["workers"] = o["workers"]
    return RunSpec(
        target=o["target"],
        workload=o["workload"],
        tasks=o["tasks"],
        time_s=o["time_s"],
        warmup=o["warmup"],
        params=params,
        engine_options=engine_options,
        parsl_config=resolved(o["parsl_config"]),
        command=o["command"],
        metric=o["metric"] or "",  # "": the default for the target (spec.default_metric)
        timeout_s=o["timeout_s"],
        run_root=o["run_root"],
        keep_run_dir=o["keep_run_dir"],
        graceful=o["graceful"],
        allow_insecure=o["allow_insecure"],
        isolate=o.get("isolate"),
    )


#: ``perflab run --source``: import a tree in place (``compare --source-a/-b`` install one
#: into a private venv instead; source transforms follow either).
source_option = click.option(
    "--source",
    "sources",
    multiple=True,
    metavar="[PACKAGE=]DIR",
    help="Import PACKAGE (default parsl) from this source tree (a git checkout) instead of "
    "the installed release; source transforms apply to it (repeatable).",
)


def sources(values: tuple[str, ...]) -> dict[str, str]:
    """``("parsl=../parsl",)`` or ``("../parsl",)`` -> ``{"parsl": "/abs/parsl"}``."""
    out = {}
    for v in values:
        package, sep, path = v.rpartition("=")
        try:
            is_dir = Path(path).is_dir()
        except OSError as exc:  # a name too long for the file system, say
            raise PerflabError(f"--source {v[:100]}: {exc.strerror}") from None
        if not is_dir:
            raise PerflabError(f"--source {v[:100]}: {path[:100]} is not a directory")
        out[package if sep else "parsl"] = str(Path(path).resolve())
    return out
