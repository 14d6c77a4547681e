"""``perflab bisect``: from a step between two releases or commits to the commits that made
it (noisy bisection with the compare gate; see docs/bisect.md)."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

import click

from perflab.bisect import commits as git_
from perflab.bisect.driver import (
    MOST_MEASURED,
    Point,
    Settings,
    State,
    Tally,
    check_precision,
    commit_points,
    release_points,
    run_bisect,
    state_path,
)
from perflab.bisect.releases import as_version, between, index_versions, release_tag
from perflab.bisect.render import lines, stage_dict, what_args
from perflab.cli.app import json_option, main, output_option, progress
from perflab.cli.compare import ALPHA, DECISION_OPTIONS, gate_metric
from perflab.cli.helpfmt import preset_options
from perflab.cli.ranges import ends_of, range_option
from perflab.cli.spec_options import base_spec, run_options
from perflab.cli.spelling import Deprecated
from perflab.errors import PerflabError, Unanswerable
from perflab.files import atomic_write, home_dir
from perflab.prepare import prepare
from perflab.run.measure import validate
from perflab.spec import RunSpec

OPTIONS = [
    click.option("--package", default="parsl", show_default=True, help="The package bisected."),
    range_option("The good (older) end and the bad (newer) one: releases of --package, or "
                 "commits or tags of --repo."),
    click.option("--good", cls=Deprecated, now="--range GOOD..BAD"),
    click.option("--bad", cls=Deprecated, now="--range GOOD..BAD"),
    click.option("--repo", type=click.Path(), help="A git clone of the package (read only)."),
    DECISION_OPTIONS[0],  # --min-effect
    click.option("--alpha", type=float, default=ALPHA, show_default=True,
                 help="Chance of any wrong decision over the whole search."),
    click.option("--runs", type=int, help="Most runs per side (default 10)."),
    click.option("--min-runs", type=int, default=4, show_default=True,
                 help="Runs per side before a comparison's first look."),
    click.option("--fixed", is_flag=True,
                 help="Always --runs runs per side, every hunk replicate (no early stop)."),
    click.option("--max-culprits", type=int, default=3, show_default=True,
                 help="Culprits followed at most (splits beyond are not followed)."),
    click.option("--build", type=click.Choice(["venv", "tree"]), default="venv",
                 show_default=True,
                 help="A commit's tree pip-installed into a cached venv, or (tree: quicker, "
                 "for a pure-Python package whose dependencies are installed here) its "
                 "package directory first on PYTHONPATH."),
    click.option("--precision", "precision_target", metavar="PCT",
                 help="CI half-width each comparison is to reach (e.g. 3%), planned as "
                 "`compare --precision` plans it from `perflab precision`'s stored parts for "
                 "the same benchmark (instead of --runs/--tasks/--fixed)."),
    click.option("--max-time", type=float,
                 help="Seconds one --precision comparison may take (default 3600); a plan "
                 "longer at the search's level is refused before any run."),
    click.option("--explain", "explain_hunks", is_flag=True,
                 help="Measure each culprit commit's hunk groups together (a factorial of "
                 "reverts): each group's share, its effect alone and every two-way "
                 "interaction, with intervals."),
    click.option("--hunk-groups", type=int, metavar="N",
                 help="With --explain: the N largest hunk groups of a culprit are measured "
                 f"(default {MOST_MEASURED}); the rest are listed, not measured."),
]  # fmt: skip


def bisect_options(f: Any) -> Any:
    for opt in reversed(OPTIONS):
        f = opt(f)
    return f


#: ``--treat``: the treated program is what every point benchmarks (``_treated``).
treat_option = click.option(
    "--treat",
    "treat_set",
    default="",
    metavar="A,B=LEVEL",
    help="Treatment set (catalog factors or label:NAME) applied at every point: the treated "
    "program is benchmarked, and each run fails unless the treatment is seen to take effect.",
)


def _treated(base: RunSpec, o: dict[str, Any]) -> RunSpec:
    """``base`` with ``--treat`` applied (validated before anything runs); as it is without."""
    if not o.get("treat_set"):
        return base
    from perflab.factors.catalog import load_catalogs
    from perflab.factors.treat import treat

    return treat(base, o["treat_set"], load_catalogs(list(o.get("catalogs") or ())))


@main.command("bisect")
@preset_options
@run_options
@bisect_options
@treat_option
@output_option("Write bisect.json, bisect.html and a PNG per stage (the metric on the axis).")
@json_option
def bisect_cmd(**o: Any) -> None:
    """Which commits made the step between the ends of --range GOOD..BAD? Confirms the step with the
    paired gate, bisects the releases the package index lists between them, then (with
    --repo) the commits between the two releases found. Progress (each build, each
    comparison as decided, the runs and minutes so far) goes to stderr, also with --json.
    Exit 0 done, 1 an end does not build or run (nothing bisected), 2 bad input."""
    o["good"], o["bad"] = ends_of(o, ("good", "bad"))
    settings = _settings(o)
    base = _treated(base_spec(o), o)
    validate(base)
    repo = git_.check_clone(Path(o["repo"]), o["package"]) if o["repo"] else None
    result: dict[str, Any] = {
        "package": o["package"], "good": o["good"], "bad": o["bad"],
        "metric": settings.metric, "stages": [], "notes": [], "reused": 0, "state": [],
    }  # fmt: skip
    say, o["tally"] = progress, Tally()  # on stderr, also with --json (an hour is not silent)
    if _is_release(o["good"], repo) and _is_release(o["bad"], repo):
        _releases(o, base, settings, repo, result, say)
    elif repo is None:
        raise PerflabError("commits need --repo (a git clone of the package)")
    else:
        good, bad = (git_.resolve(repo, o[k], o["package"]) for k in ("good", "bad"))
        _commits(o, base, settings, repo, (good, bad), result, say)
    result["state"] = ", ".join(result["state"])
    result["minutes"] = round((time.monotonic() - o["tally"].t0) / 60, 2)
    result["runs_made"] = o["tally"].runs
    _output(result, o)


def _settings(o: dict[str, Any]) -> Settings:
    from perflab.compare.planned import DEFAULT_MAX_TIME_S, parse_target

    metric = gate_metric(o)
    if not 0 < o["alpha"] < 0.5 or not 0 < o["threshold"] < 1:
        raise PerflabError("--alpha must be in (0, 0.5) and --min-effect in (0, 1)")
    runs = 10 if o["runs"] is None else o["runs"]
    if runs < 2 or o["max_culprits"] < 1:
        raise PerflabError("--runs must be at least 2 and --max-culprits at least 1")
    precision, max_time = None, DEFAULT_MAX_TIME_S if o["max_time"] is None else o["max_time"]
    if o["precision_target"] is not None:
        if o["runs"] is not None or o["fixed"] or o["tasks"] or o["time_s"]:
            raise PerflabError("--precision plans the runs and the window: drop --runs, "
                               "--fixed, --tasks and --time")  # fmt: skip
        precision = parse_target(o["precision_target"])
    elif o["max_time"] is not None:
        raise PerflabError("--max-time bounds a --precision comparison: give --precision")
    if o["hunk_groups"] is not None and (o["hunk_groups"] < 0 or not o["explain_hunks"]):
        raise PerflabError("--hunk-groups N (N ≥ 0) sets how many hunk groups --explain "
                           "measures: give --explain")  # fmt: skip
    return Settings(metric, o["threshold"], o["alpha"], o["min_runs"], runs, o["fixed"],
                    o["max_culprits"], o["build"], precision, max_time)  # fmt: skip


def _what(base: RunSpec, settings: Settings) -> list[str]:
    """The benchmark's options for a printed `perflab compare`; planned as the search was."""
    from perflab.compare.planned import DEFAULT_MAX_TIME_S

    if settings.precision is None:
        return what_args(base, settings.metric)
    budget = None if settings.max_time_s == DEFAULT_MAX_TIME_S else settings.max_time_s
    return what_args(base, settings.metric, settings.precision, budget)


def _is_release(end: str, repo: Path | None) -> bool:
    """A release end: a version (and, with a clone, one of its tags names it)."""
    return as_version(end) is not None and (repo is None or release_tag(repo, end) is not None)


def _search(points: list[Point], base: RunSpec, settings: Settings, result: dict, say: Any,
            tally: Tally, stage: str) -> Any:  # fmt: skip
    check_precision(base, settings, len(points))
    say(stage)  # once the input is known good: a refusal stays one line
    state = State(state_path(home_dir("bisect"), base, settings, [p.key for p in points]))
    search = run_bisect(points, settings, state, say, base, tally)
    say(f"{search.outcome}: {len(search.culprits)} culprit(s) after {len(search.steps)} "
        f"comparisons; {tally.add(0)}")  # fmt: skip
    result["reused"] += state.reused
    state.reused = 0  # counted; the hunks' reuse (--explain) is counted after them
    result["state"].append(str(state.path))
    return search, state


def _releases(o: dict, base: RunSpec, settings: Settings, repo: Path | None, result: dict,
              say: Any) -> None:  # fmt: skip
    """Bisect the releases between the ends; then the commits between each culprit release
    and the one before it (with --repo, by the releases' tags)."""
    package = o["package"]
    versions = between(index_versions(package), o["good"], o["bad"])
    points = release_points(base, package, versions, prepare)
    what = f"releases: {len(points)} of {package} from {o['good']} to {o['bad']} on the index"
    search, _ = _search(points, base, settings, result, say, o["tally"], what)
    st = stage_dict("releases", points, search, {})
    for c in st["culprits"]:
        c["reproduce"] = [
            " ".join(
                [
                    "perflab",
                    "compare",
                    "--package",
                    package,
                    "--range",
                    f"{c['before']}..{c['key']}",
                    *_what(base, settings),
                ]
            )
        ]
    result["stages"].append(st)  # fmt: skip
    if repo is None:
        if st["culprits"]:
            result["notes"].append("give --repo (a clone of the package) to bisect the commits")
        return
    for c in st["culprits"]:
        tags = [release_tag(repo, v) for v in (c["before"], c["key"])]
        if None in tags:
            result["notes"].append(f"no tag for {c['before']} or {c['key']}: commits not bisected")
            continue
        ends = tuple(git_.resolve(repo, str(t), package) for t in tags)
        _commits(o, base, settings, repo, ends, result, say)  # type: ignore[arg-type]


def _commits(o: dict, base: RunSpec, settings: Settings, repo: Path, ends: tuple[str, str],
             result: dict, say: Any) -> None:  # fmt: skip
    """Bisect the first-parent commits from ``ends[0]`` to ``ends[1]``."""
    cache = home_dir("bisect", "trees")
    commits = git_.commits_between(repo, *ends)
    points = commit_points(repo, commits, base, settings, o["package"], prepare)
    what = f"commits: {len(points)} first-parent commits from {ends[0][:10]} to {ends[1][:10]}"
    search, state = _search(points, base, settings, result, say, o["tally"], what)
    st = stage_dict("commits", points, search, {"repo": str(repo)})
    for c in st["culprits"]:
        trees = [cache / c["before"], cache / c["key"]]
        c["reproduce"] = [
            f"git -C {repo} show {c['key'][:12]}",
            " ".join(["perflab", "compare", "--source-a", str(trees[0]), "--source-b",
                      str(trees[1]), *_what(base, settings)]),
        ]  # fmt: skip
        if o["explain_hunks"]:
            most = MOST_MEASURED if o["hunk_groups"] is None else o["hunk_groups"]
            _explain(c, points[c["index"]], (repo, cache), o["package"], settings, state, say,
                     (most, o["tally"]), base)  # fmt: skip
            result["reused"] += state.reused
            state.reused = 0
    result["stages"].append(st)


def _explain(c: dict, point: Point, where: tuple[Path, Path], package: str, settings: Settings,
             state: State, say: Any, how: tuple[int, Tally], base: RunSpec) -> None:  # fmt: skip
    """The culprit commit's hunk groups measured together, a factorial (``--explain``); with
    --precision each revert is planned from ``base``'s stored parts, as the search was."""
    from perflab.bisect.onward import explain_culprit, hunk_lines

    repo, cache = where
    say(f"explain: the hunk groups of culprit {c['key'][:10]}")
    trees = (git_.tree(repo, c["before"], cache), git_.tree(repo, c["key"], cache))
    culprit_ready = point.prepared or point.make()
    c.update(explain_culprit(c, culprit_ready, trees, package, settings, state, prepare, say,
                             *how, base))  # fmt: skip
    c["hunk_groups_measured"] = how[0]
    c["hunks"] = hunk_lines(c["hunk_groups"], 8, c["hunk_design"], c["hunk_interactions"])


def _output(result: dict[str, Any], o: dict[str, Any]) -> None:
    if o["output"]:
        from perflab.bisect.figure import draw
        from perflab.bisect.page import page

        out = Path(o["output"])
        out.mkdir(parents=True, exist_ok=True)
        for i, st in enumerate(result["stages"]):
            png = draw(st, result["metric"], out / f"bisect-{i + 1}-{st['axis']}.png")
            st["figure"] = png.name if png else None
        atomic_write(out / "bisect.json", json.dumps(result, indent=1))
        atomic_write(out / "bisect.html", page(result))
    if o["as_json"]:
        click.echo(json.dumps(result))
    else:
        click.echo("\n".join(lines(result)))
    for st in result["stages"]:  # shown and kept; an end that does not run answers nothing
        if st["outcome"] == "end failed":
            ends = [s for s in st["skipped"] if s["index"] in (0, len(st["points"]) - 1)]
            why = "; ".join(f"{s['label']}: {s['reason']}" for s in ends) or "an end failed"
            raise Unanswerable(f"bisect: an end does not build or run, nothing bisected: {why}")
    sys.exit(0)
