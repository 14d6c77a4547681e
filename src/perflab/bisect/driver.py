"""The search on real points: each point (a release, or a commit of a clone) is a spec made
ready once through ``prepare`` (its ``Prepared`` serves every comparison and run of it); each
comparison is ``compare``'s paired sequential gate; every
comparison's result (and every point that failed) is kept in a state file in perflab's home,
written atomically after each, so the same command run again resumes where it stopped."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from perflab.analysis.stats import spent_level
from perflab.bisect.search import PointFailed, Search, Step, bisect, planned_comparisons
from perflab.compare.gate import Comparison, Side, run_compare
from perflab.errors import PerflabError
from perflab.files import atomic_write
from perflab.prepare import Prepared
from perflab.spec import RunSpec

#: Hunk groups ``--explain`` measures per culprit by default (``--hunk-groups``): the
#: largest first; the rest are listed, not measured.
MOST_MEASURED = 6


@dataclass
class Point:
    """One point of the axis: ``key`` identifies it (a version, a commit's sha), ``label``
    is what the user reads; ``make`` prepares its spec (a venv, a tree), once."""

    key: str
    label: str
    make: Callable[[], Prepared]
    info: dict[str, Any] = field(default_factory=dict)
    prepared: Prepared | None = None


@dataclass(frozen=True)
class Settings:
    metric: str
    threshold: float = 0.05
    alpha: float = 0.05
    n_min: int = 4
    n_max: int = 10
    fixed: bool = False
    max_culprits: int = 3
    #: How a commit is built: ``venv`` (its tree pip-installed into a cached venv) or
    #: ``tree`` (its package directory first on PYTHONPATH, dependencies as installed here).
    build: str = "venv"
    #: Target half-width of each comparison's interval (``--precision``): each is planned as
    #: ``compare --precision`` plans it, from the parts ``perflab precision`` stored; None:
    #: the sequential gate with ``n_min``…``n_max`` runs per side.
    precision: float | None = None
    #: Seconds one planned comparison may take (``--max-time``).
    max_time_s: float = 3600.0


@dataclass
class Tally:
    """The runs one bisect command has made and the minutes it has taken, for its progress
    lines (one tally across its stages and ``--explain``)."""

    runs: int = 0
    t0: float = field(default_factory=time.monotonic)

    def add(self, runs: int) -> str:
        """Count ``runs`` more; the running total as text."""
        self.runs += runs
        return f"{self.runs} runs, {(time.monotonic() - self.t0) / 60:.0f} min so far"


class State:
    """Comparisons and failed points of one search, kept in a JSON file (written whole and
    atomically, only once there is something to keep)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.data: dict[str, Any] = {"steps": {}, "failed": {}}
        if path.is_file():
            self.data = json.loads(path.read_text())
        self.reused = 0

    def save(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(self.path, json.dumps(self.data, indent=1))


def state_path(root: Path, base: RunSpec, settings: Settings, keys: list[str]) -> Path:
    """The state file of a search: named by what is measured, how, and the axis."""
    spec = {
        k: v
        for k, v in dataclasses.asdict(base).items()
        if k not in ("run_root", "keep_run_dir", "campaign")
    }
    how = dataclasses.asdict(settings)
    if settings.precision is None:  # named as before --precision was: an older search resumes
        del how["precision"], how["max_time_s"]
    payload = json.dumps([spec, how, keys], sort_keys=True, default=str)
    return root / f"{hashlib.sha256(payload.encode()).hexdigest()[:16]}.json"


def compare_points(
    a: Side,
    b: Side,
    settings: Settings,
    level: float,
    on_step: Callable[[str], None] | None = None,
    base: RunSpec | None = None,
) -> Comparison:
    """One comparison at ``level``: the sequential paired gate; with ``settings.precision``
    the planned comparison of ``compare --precision`` instead (its window and runs planned
    from the parts ``perflab precision`` stored for ``base``, the spec the points are made
    from)."""
    if settings.precision is not None:
        from perflab.compare.planned import precise_compare

        say = (lambda text: on_step(re.sub(r"\[/?dim\]", "", text))) if on_step else None
        o = {"alpha": level, "threshold": settings.threshold, "min_runs": settings.n_min,
             "say": say, "parts_of": base}  # fmt: skip
        return precise_compare(a, b, settings.metric, settings.precision, settings.max_time_s, o)
    return run_compare(
        a, b, settings.metric, settings.threshold, level,
        settings.n_min, settings.n_max, "--runs", sequential=not settings.fixed,
        progress=(lambda label, i, n, _: on_step(f"  run {i}/{n} (side {label})"))
        if on_step else None,
    )  # fmt: skip


def check_precision(base: RunSpec, settings: Settings, n_points: int) -> None:
    """With ``--precision``: bad input (nothing run) when ``perflab precision`` stored no parts
    for ``base``, or when a comparison at the search's level would take longer than
    ``--max-time``."""
    if settings.precision is None:
        return
    from perflab.compare import command_parts
    from perflab.compare.planned import plan_or_refuse
    from perflab.files import perflab_home

    if (
        base.command is not None
        and command_parts.load(base, settings.metric, perflab_home()) is None
    ):
        return  # a command's pilot runs on the first comparison's point (not the bare base)

    # the first comparison's level, the largest the search gives
    level = spent_level(settings.alpha, planned_comparisons(n_points, settings.max_culprits), 0)
    plan_or_refuse(Side("A", base), settings.metric, settings.precision, settings.max_time_s,
                   level)  # fmt: skip


def gate_measure(
    points: list[Point],
    settings: Settings,
    state: State,
    on_step: Callable[[str], None] | None = None,
    base: RunSpec | None = None,
    tally: Tally | None = None,
) -> Callable[[int, int, float], Step]:
    """``measure(a, b, level)`` for ``search.bisect``: the paired gate (or the planned
    comparison, ``compare_points``) between two points' specs, or the result kept in
    ``state``; a point that does not build or run raises PointFailed (and is kept as failed).
    ``on_step`` hears each build, each comparison begun and decided (with ``tally``'s runs
    and minutes so far)."""
    say = on_step or (lambda _: None)
    tally = tally or Tally()

    def ready(i: int) -> Side:
        p = points[i]
        if p.key in state.data["failed"]:
            raise PointFailed(i, state.data["failed"][p.key])
        if p.prepared is None:
            say(f"preparing {p.label} (its venv or tree is built once, or found cached)")
            try:
                p.prepared = p.make()
            except PerflabError as exc:
                fail(i, f"does not build: {exc}")
        assert p.prepared is not None
        return Side(p.label, p.prepared.spec, prepared=p.prepared)  # not prepared again

    def fail(i: int, reason: str) -> None:
        state.data["failed"][points[i].key] = reason
        state.save()
        raise PointFailed(i, reason)

    def measure(a: int, b: int, level: float) -> Step:
        key = f"{points[a].key}..{points[b].key}@{level:.8g}"
        pair = f"{points[a].label} → {points[b].label}"
        if key in state.data["steps"]:
            state.reused += 1
            step = Step(**{**state.data["steps"][key], "a": a, "b": b})
            say(f"{pair}: {step.text()} (kept from before); {tally.add(0)}")
            return step
        side_a, side_b = ready(a), ready(b)
        what = "confirming the step" if (a, b) == (0, len(points) - 1) else "comparing"
        say(f"{what} {pair} (level {level:.2g})")
        cmp = compare_points(side_a, side_b, settings, level, on_step, base)
        tally.add(len(side_a.values) + len(side_b.values))
        if cmp.failed is not None:
            i = a if any(r.run_id == cmp.failed.run_id for r in side_a.records) else b
            lines = [ln for ln in (cmp.failed.error or "").splitlines() if ln.strip()]
            fail(i, f"does not run: {lines[-1] if lines else 'failed'}")
        d = cmp.decision
        assert d is not None
        runs = len(side_a.values) + len(side_b.values)
        keep = ("half_width", "target", "stopped", "wall_s", "half_width_per_hour", "line")
        reached = {k: cmp.precision[k] for k in keep} if cmp.precision else None
        step = Step(a, b, d.ratio, d.ci_low, d.ci_high, d.verdict, runs, level, reached)
        state.data["steps"][key] = step.to_dict()
        state.save()
        say(f"{pair}: {step.text()}; {tally.add(0)}")
        return step

    return measure


def run_bisect(
    points: list[Point],
    settings: Settings,
    state: State,
    on_step: Callable[[str], None] | None = None,
    base: RunSpec | None = None,
    tally: Tally | None = None,
) -> Search:
    """The search over ``points`` (oldest first: ``points[0]`` good, the last bad), made
    from ``base`` (whose stored parts plan each comparison with ``settings.precision``);
    ``tally`` counts its runs and minutes for ``on_step``'s lines."""
    measure = gate_measure(points, settings, state, on_step, base, tally)
    return bisect(len(points), measure, settings.alpha, settings.max_culprits)


def release_points(
    base: RunSpec, package: str, versions: list[str], prepare: Callable[[RunSpec], Prepared]
) -> list[Point]:
    """One point per release: ``base`` with ``package==version`` in its cached venv."""

    def maker(v: str) -> Callable[[], Prepared]:
        return lambda: prepare(replace(base, packages=[*base.packages, f"{package}=={v}"]))

    return [Point(v, f"{package} {v}", maker(v), {"version": v}) for v in versions]


def share_text(lo: float, hi: float) -> str:
    if not (math.isfinite(lo) and math.isfinite(hi)):
        return "interval n/a"
    return f"{lo:.0%}–{hi:.0%}"


def commit_points(
    repo: Path,
    commits: list[Any],
    base: RunSpec,
    settings: Settings,
    package: str,
    prepare: Callable[[RunSpec], Prepared],
) -> list[Point]:
    """One point per commit: its tree (``git archive``, cached by sha under perflab's home)
    installed as a source tree into its own cached venv, whatever version the tree declares;
    or (``settings.build == "tree"``) its package directory put first on PYTHONPATH."""
    from perflab.bisect.commits import tree
    from perflab.compare.sides import side_spec
    from perflab.files import home_dir

    cache = home_dir("bisect", "trees")

    def maker(sha: str) -> Callable[[], Prepared]:
        def make() -> Prepared:
            src = tree(repo, sha, cache)
            if settings.build == "tree":
                return prepare(replace(base, sources={**base.sources, package: str(src)}))
            return prepare(side_spec(base, source=str(src)))

        return make

    return [
        Point(c.sha, f"{c.short} {c.subject[:50]}", maker(c.sha),
              {"sha": c.sha, "subject": c.subject, "pr": c.pr})
        for c in commits
    ]  # fmt: skip
