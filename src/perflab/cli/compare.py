"""``perflab compare``: A/B with a verdict and CI exit codes.

Every run option applies to both sides; the side options below also come as ``-a``/``-b``
variants (``--treat-b``, ``--package-a`` …) that apply to one side only.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from typing import Any, TypeVar

import click

from perflab.cli.app import Aliased, err_console, json_option, main, progress
from perflab.cli.helpfmt import preset_options
from perflab.cli.precise import precision_option
from perflab.cli.ranges import compare_sides, range_option
from perflab.cli.spec_options import base_spec, run_options
from perflab.cli.spelling import Deprecated
from perflab.compare import calibrate as cal
from perflab.compare.gate import (
    DEFAULT_MAX_RUNS,
    DEFAULT_MIN_RUNS,
    DERIVED,
    Side,
    run_compare,
)
from perflab.compare.render import markdown, print_comparison
from perflab.compare.sides import side_spec
from perflab.errors import PerflabError
from perflab.files import atomic_write, perflab_home
from perflab.prepare import Prepared
from perflab.run.measure import measure, validate
from perflab.run.record import METRICS, RunRecord
from perflab.spec import RunSpec, default_metric

T = TypeVar("T")

#: The one significance level of every verb's gate (compare's was 0.01 before issue 51).
ALPHA = 0.05

#: (option stem, click kwargs): each becomes --stem, --stem-a and --stem-b.
SIDE_OPTIONS: list[tuple[str, dict[str, Any]]] = [
    ("treat", {"metavar": "A,B=LEVEL", "help": "Treatment set from the catalog."}),
    ("command", {"help": "Black-box command (its last stdout line is the score)."}),
    (
        "python",
        {
            "help": "Interpreter: a version present here (3.12) or a path; "
            "a bare interpreter gets a private venv with this environment's packages."
        },
    ),
    (
        "package",
        {
            "multiple": True,
            "metavar": "NAME[==VERSION]",
            "help": "Package version installed into a cached private venv (repeatable); a bare "
            "NAME says whose releases --range names (default parsl).",
        },
    ),
    (
        "patch",
        {
            "type": click.Path(),
            "help": "Unified diff applied to a private copy of the "
            "installed package (as the patch factors are).",
        },
    ),
    (
        "source",
        {
            "type": click.Path(),
            "help": "Local source tree of a package, installed "
            "into a cached private venv (rebuilt when the tree changes).",
        },
    ),
    ("opt", {"multiple": True, "metavar": "KEY=VALUE", "help": "Engine option (repeatable)."}),
    ("param", {"multiple": True, "metavar": "KEY=VALUE", "help": "Workload parameter."}),
]
DECISION_OPTIONS = [
    click.option(
        "--min-effect",
        "threshold",
        type=float,
        default=0.05,
        show_default=True,
        cls=Aliased,
        old=("--threshold",),
        help="A change worth reporting (0.05: 5%): smaller ones are 'no difference'.",
    ),
    click.option(
        "--alpha",
        type=float,
        default=ALPHA,
        show_default=True,
        help="False-alarm rate of the whole (sequential) comparison.",
    ),
]


#: Stems that are run options already (shared form comes from there).
IN_RUN_OPTIONS = {"command", "opt", "param"}


#: Option stems that take -a/-b variants (click destinations ``side_<stem>[_a|_b]``).
SIDE_KEYS = ("treat", "command", "python", "package", "patch", "source", "opt", "param")


def _pick(o: dict[str, Any], key: str, side: str) -> Any:
    """The side's own value if given, else the shared one; repeatable options add up."""
    shared, own = o.get(f"side_{key}"), o.get(f"side_{key}_{side}")
    if isinstance(shared, tuple):
        return (*shared, *(own or ()))
    return own if own not in (None, "") else shared


def _side(o: dict[str, Any], side: str) -> RunSpec:
    """The RunSpec of side ``"a"`` or ``"b"``: the run options with that side's overrides."""
    opts = dict(o)
    # --command, --opt and --param are run options already: only their -a/-b are added
    opts["command"] = o.get(f"side_command_{side}") or o["command"]
    opts["opts"] = (*o["opts"], *(o.get(f"side_opt_{side}") or ()))
    opts["params"] = (*o["params"], *(o.get(f"side_param_{side}") or ()))
    return side_spec(
        base_spec(opts),
        treatments=_pick(o, "treat", side) or "",
        catalogs=list(o.get("catalogs") or ()),
        python=_pick(o, "python", side),
        packages=tuple(_pick(o, "package", side) or ()),
        source=_pick(o, "source", side),
        patch=_pick(o, "patch", side),
    )


def side_options(f: Any) -> Any:
    for stem, kw in reversed(SIDE_OPTIONS):
        suffixes = [("-b", "Side B only"), ("-a", "Side A only")]
        if stem not in IN_RUN_OPTIONS:
            suffixes.append(("", ""))
        for suffix, who in suffixes:
            kwargs = dict(kw)
            if suffix:
                kwargs["help"] = f"{who} (see --{stem})."
            dest = stem.replace("-", "_") + suffix.replace("-", "_")
            if stem == "package" and suffix:  # one side's release: now --range A..B
                kwargs.update(cls=Deprecated, now="--range A..B (with --package NAME)")
            f = click.option(f"--{stem}{suffix}", f"side_{dest}", **kwargs)(f)
    return f


def decision_options(f: Any) -> Any:
    for opt in reversed(DECISION_OPTIONS):
        f = opt(f)
    return f


def gate_metric(o: dict[str, Any]) -> str:
    """``--metric`` (``o``: click's keyword arguments), if the gate can decide on it (a
    record's metric or a derived one); unnamed, the run's own default: ``wall_s`` for a
    command, else ``us_per_task``."""
    command = o.get("command") or o.get("side_command_a") or o.get("side_command_b")
    metric = o["metric"] or default_metric(command)
    if metric not in METRICS and metric not in DERIVED:
        raise PerflabError(
            f"unknown metric {metric!r} for --metric (known: {', '.join([*METRICS, *DERIVED])})"
        )
    return metric


@main.command()
@preset_options
@run_options
@side_options
@range_option("A's end and B's: releases of --package NAME, commits or tags of --repo, or "
              "two source folders.")  # fmt: skip
@click.option("--repo", type=click.Path(), help="A git clone: --range names its commits.")
@decision_options
@click.option(
    "--runs",
    type=int,
    help="Most runs per side (default: from `perflab precision --gate` "
    f"for this benchmark, else {DEFAULT_MAX_RUNS}).",
)
@click.option(
    "--min-runs",
    type=int,
    default=DEFAULT_MIN_RUNS,
    show_default=True,
    help="Runs per side before the first look.",
)
@click.option("--fixed", is_flag=True, help="Always make --runs runs per side (no early stop).")
@precision_option(
    "on the ratio (e.g. 3%): the window and the runs are planned from `perflab precision`'s "
    "stored parts (instead of --runs/--tasks)"
)
@click.option(
    "--max-time",
    type=float,
    help="Seconds the comparison may take. With --precision: its plan's budget (default "
    "3600; a longer plan is refused). Without: an undecided comparison goes on past --runs "
    "until decided or out of time, then says the node is too noisy for ±--min-effect.",
)
@click.option(
    "--update-parts",
    is_flag=True,
    help="With --precision: pool this comparison's pairs into the stored parts it was planned "
    "from (refitted, with intervals), so the next plan learns from it.",
)
@click.option(
    "--unpaired",
    is_flag=True,
    help="Welch t-test with a BCa bootstrap CI instead of the paired t-test on neighbouring "
    "A/B runs (use it when one side's run can change the next run of the other).",
)
@click.option(
    "--markdown",
    "markdown_path",
    type=click.Path(),
    help="Write a Markdown summary (for a PR comment or CI step summary); - for stdout.",
)
@json_option
def compare(
    runs: int | None,
    min_runs: int,
    fixed: bool,
    precision_target: str | None,
    max_time: float | None,
    update_parts: bool,
    unpaired: bool,
    markdown_path: str | None,
    threshold: float,
    alpha: float,
    as_json: bool,
    **o: Any,
) -> None:
    """Would B help or hinder? Runs A and B interleaved (ABBA) until decided, testing each A
    run against its neighbouring B run (paired); prints each side, the ratio B/A with a CI, a
    p-value and a verdict: faster, slower, no difference, or inconclusive. Exit 0 no
    regression, 1 regression (B slower, or a run failed), 2 bad input."""
    metric = gate_metric(o)
    compare_sides(o)
    if update_parts and precision_target is None:
        raise PerflabError("--update-parts pools a planned comparison: give --precision")
    if max_time is not None and (not max_time > 0 or (fixed and precision_target is None)):
        raise PerflabError("--max-time lets an undecided comparison go on past --runs: it "
                           "takes a time > 0 and no --fixed")  # fmt: skip
    a, b = (Side(s.upper(), _side(o, s)) for s in ("a", "b"))
    asked_ab = any(o.get(f"side_{k}_{s}") for k in SIDE_KEYS for s in ("a", "b"))
    for side in (a, b):
        validate(side.spec)
    for side in (a, b):  # private venvs and trees are built (or found) before the first run
        side.ready()  # once: every run of the side reuses it
    if precision_target is not None:
        kw: dict[str, Any] = {"alpha": alpha, "threshold": threshold, "min_runs": min_runs}
        kw["say"] = err_console.print  # on stderr, also with --json
        kw["update_parts"] = update_parts
        kw["conflict"] = runs is not None or fixed or unpaired or o["tasks"] or o["time_s"]
        result = _precise(a, b, metric, precision_target, max_time, kw)
    else:
        n_max, source = _n_max(runs, a, metric)
        result = run_compare(
            a, b, metric, threshold, alpha, min_runs, n_max, source,
            sequential=not fixed, progress=_progress, paired=not unpaired, max_time_s=max_time,
        )  # fmt: skip
    if result.identical and asked_ab:
        result.notes.append("A and B are identical: this was an A/A comparison")
        err_console.print("[yellow]warning[/yellow]: A and B are identical; ran as A/A")
    if as_json:
        click.echo(json.dumps(result.to_dict()))
    else:
        print_comparison(result)
    if markdown_path == "-":
        click.echo(markdown(result))
    elif markdown_path:
        atomic_write(markdown_path, markdown(result))
    sys.exit(1 if result.regression else 0)


def _precise(
    a: Side, b: Side, metric: str, target: str, max_time: float | None, kw: dict[str, Any]
) -> Any:
    """``--precision``: planned from the stored parts (cli/precision.py)."""
    from perflab.compare import planned as pc

    if kw["conflict"]:
        raise PerflabError("--precision plans the runs and the window: drop --runs, --fixed, "
                           "--unpaired, --tasks and --time")  # fmt: skip
    limit = pc.DEFAULT_MAX_TIME_S if max_time is None else max_time
    return pc.precise_compare(a, b, metric, pc.parse_target(target), limit, kw)


def _n_max(runs: int | None, a: Side, metric: str) -> tuple[int, str]:
    if runs is not None:
        return runs, "--runs"
    return cal.runs_per_side(a.spec, metric, perflab_home())


def fresh_runs(prepared: Prepared, runs: int, value_of: Callable[[RunRecord], T | None]) -> list[T]:
    """Each value (``value_of`` an ok record) of ``runs`` fresh runs of a ``prepared`` spec,
    for calibrate and precision; a failed run, or one without a value, ends the verb
    (exit 1): a noise measurement with a run left out would understate the noise."""
    got: list[T] = []
    for i in range(runs):
        progress(f"run {i + 1}/{runs}")
        rec = measure(prepared)
        value = value_of(rec) if rec.status == "ok" else None
        if value is None:
            click.echo(f"perflab: run {rec.run_id} {rec.status}: {rec.error}", err=True)
            sys.exit(1)
        got.append(value)
    return got


def _progress(label: str, i: int, total: int, side: Side) -> None:
    if i <= total:
        progress(f"run {i}/{total} (side {label})")
    else:  # --max-time: undecided at --runs, it goes on
        progress(f"run {i} (side {label}; undecided at --runs, on until --max-time)")
