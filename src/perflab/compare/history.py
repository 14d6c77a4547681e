"""``history``: the same benchmark across releases of a package, each in its own cached venv,
with change points named by the two releases around them.

Every release's venv is built (or found in the cache) once, before the first run, and reused
by each of its runs, so a release that does not install stops the command before anything is
measured. Runs go in rounds, each round
visiting every release in a fresh random order, so drift spreads over all releases.
"""

from __future__ import annotations

import random
import shlex
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from perflab.compare.changepoints import ChangePoint, change_points
from perflab.compare.gate import Side, metric_value
from perflab.compare.history_seq import StepPlan, run_rounds, summary
from perflab.compare.stats import location
from perflab.errors import PerflabError
from perflab.factors.requirements import check_requirement
from perflab.prepare import Prepared
from perflab.run.measure import measure
from perflab.spec import RunSpec

#: The fewest values a release needs for its interval and for the gate that confirms a step
#: beside it (the gate tests two samples of at least 2): a release that failed below this
#: has no usable level, and the history leaves it out of the change-point search.
MIN_VALUES = 2


@dataclass
class Release(Side):
    """One release's side of a history: ``label`` is its version."""

    @property
    def version(self) -> str:
        return self.label

    def summary(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "version": self.version,
            "n": len(self.values),
            "failed": self.failed,
            "runs": len(self.values) + self.failed,
            "values": self.values,
        }
        out.update(location(self.values))
        if not self.usable:  # one value has no interval: a zero-width one would be invented
            out.pop("ci_low", None)
            out.pop("ci_high", None)
        errors = [r.error for r in self.records if r.status != "ok" and r.error]
        if errors:
            out["error"] = errors[-1][-400:]
            out["cause"] = self.cause()
        return out

    @property
    def failed(self) -> int:
        """How many of its runs failed, or ended ok with no usable value."""
        ok = sum(r.status == "ok" for r in self.records)
        return len(self.records) - ok + max(0, ok - len(self.values))

    @property
    def usable(self) -> bool:
        """Whether it has a level the change-point search and the gate can use."""
        return len(self.values) >= MIN_VALUES

    def cause(self) -> str:
        """Why its runs failed: the last line of the last error (a traceback's last line
        names what went wrong, e.g. a module the release's venv lacks); "" if none failed."""
        for rec in reversed(self.records):
            if rec.status != "ok":
                lines = [ln.strip() for ln in (rec.error or "").splitlines() if ln.strip()]
                return lines[-1] if lines else "no error recorded"
        return ""

    @property
    def refused(self) -> bool:
        """A run was refused (perflab's own PerflabError in the child: bad input, or a
        release that lacks what a run needs, such as HTEX encryption): a cause that every
        further run would only repeat, unlike a run lost to a timeout under load."""
        return self.cause().startswith(("PerflabError", "perflab.errors.PerflabError"))


@dataclass
class History:
    package: str
    metric: str
    releases: list[Release]
    change_points: list[ChangePoint]
    threshold: float
    alpha: float
    #: ``history --precision``: what the early-stopping steps used and reached
    #: (``history_seq.summary``); None: every planned run was made.
    precision: dict[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            **({"precision": self.precision} if self.precision else {}),
            "package": self.package,
            "metric": self.metric,
            "threshold": self.threshold,
            "alpha": self.alpha,
            "releases": [r.summary() for r in self.releases],
            "absent": self.absent(),
            "too_few": self.too_few(),
            "change_points": [
                {
                    **c.to_dict(),
                    "explain": self.explain_command(c) if c.confirmed else None,
                    "bisect": self.bisect_command(c) if c.confirmed else None,
                }
                for c in self.change_points
            ],
        }

    def absent(self) -> list[str]:
        """Each release with no value, and why: its level is absent from the table and the
        change-point search (a failed run never stands in for a number)."""
        out = []
        for r in self.releases:
            if r.values:
                continue
            why = r.cause() or f"no run gave a positive {self.metric}"
            out.append(f"{r.version} failed in {r.failed} of {r.failed} runs: {why}")
        return out

    def too_few(self) -> list[str]:
        """Each release whose failed runs left it a value but too few for an interval or the
        gate, and why: its value is shown, but it is left out of the change-point search
        (a step beside it could be proposed and never tested)."""
        return [
            f"{r.version} measured in {len(r.values)} of {len(r.values) + r.failed} runs "
            f"(the gate needs {MIN_VALUES}): {r.cause() or f'no positive {self.metric}'}"
            for r in self.releases
            if r.values and not r.usable
        ]

    def unanswered(self) -> str | None:
        """Why the history's question cannot be answered in full (None: it can): fewer than
        two usable releases leave no change point to seek; a release with no value, or too
        few for the gate, leaves a gap where a step cannot be placed. Failed runs that
        leave a release usable are said in the output, not here: its level is measured."""
        gaps = self.absent() + self.too_few()
        if not gaps:
            return None
        usable = sum(r.usable for r in self.releases)
        head = (
            f"no change point can be sought ({usable} of {len(self.releases)} releases "
            f"measured in {MIN_VALUES} runs or more)"
            if usable < 2
            else f"{len(gaps)} of {len(self.releases)} releases have no "
            f"{'usable ' if self.too_few() else ''}value (left out of the change-point search)"
        )
        return f"{head}: {'; '.join(gaps)}"

    def explain_command(self, cp: ChangePoint) -> str:
        """The ``perflab explain`` command that asks why this change point's step happened
        (the same benchmark as the history's, on the two releases around it)."""
        return " ".join(["perflab", "explain", "--package", self.package, "--range",
                         f"{cp.before}..{cp.after}", *self._what(),
                         "--metric", self.metric])  # fmt: skip

    def bisect_command(self, cp: ChangePoint) -> str:
        """The ``perflab bisect`` command that looks for the commits that made this change
        point's step (``--repo``: a clone of the package, to go on from releases to commits)."""
        return " ".join(["perflab", "bisect", "--package", self.package, "--range",
                         f"{cp.before}..{cp.after}", *self._what(), "--metric", self.metric,
                         "--repo", "CLONE"])  # fmt: skip

    def _what(self) -> list[str]:
        """The options naming the benchmark the history measured."""
        spec = self.releases[0].spec
        what = (
            ["--command", shlex.quote(spec.command)]
            if spec.command
            else ["--target", spec.target, "--workload", str(spec.workload)]
        )
        size = ["--tasks", str(spec.tasks)] if spec.tasks else (
            ["--time", str(spec.time_s)] if spec.time_s else [])  # fmt: skip
        return [*what, *size]


def release_specs(base: RunSpec, package: str, versions: list[str]) -> list[Release]:
    """One spec per release: ``base`` with ``package==version`` in its private venv."""
    if len(versions) < 2:
        raise PerflabError("--range needs at least two releases")
    if len(set(versions)) != len(versions):
        raise PerflabError("--range names a release twice")
    out = []
    for v in versions:
        req = check_requirement(f"{package}=={v}")
        out.append(Release(v, replace(base, packages=[*base.packages, req])))
    return out


def run_history(
    package: str,
    versions: list[str],
    base: RunSpec,
    runs: int,
    metric: str = "tasks_per_s",
    threshold: float = 0.05,
    alpha: float = 0.05,
    seed: int = 0,
    prepare: Callable[[RunSpec], Prepared] | None = None,
    progress: Callable[[int, int, Release], None] | None = None,
    planned: StepPlan | None = None,
    out_of_time: Callable[[], bool] = lambda: False,
) -> History:
    """Measure ``runs`` runs of every release (rounds in random order) and find change points.

    ``prepare`` (default ``perflab.prepare.prepare``) makes each release ready (its private
    venv) once, ahead of all runs; every run of the release reuses it. ``planned``
    (``history --precision``): each step stops early (``history_seq``), ``runs`` is ignored
    and ``out_of_time`` says when another round would pass the time budget."""
    if planned is None and runs < 2:
        raise PerflabError(f"--runs must be at least 2 per release (got {runs})")
    releases = release_specs(base, package, versions)
    for rel in releases:
        rel.ready(prepare)
    total = (runs if planned is None else planned.most) * len(releases)
    done = 0

    def measure_one(i: int) -> None:
        nonlocal done
        rel = releases[i]
        done += 1
        if rel.refused:  # counted as done: the progress total stays honest
            return
        if progress:
            progress(done, total, rel)
        rec = measure(rel.ready())
        rel.records.append(rec)
        value = metric_value(rec, metric) if rec.status == "ok" else None
        if value is not None and value > 0:
            rel.values.append(value)

    t0 = time.monotonic()
    steps = None
    if planned is None:
        rng = random.Random(seed)
        for _ in range(runs):
            for i in rng.sample(range(len(releases)), len(releases)):
                measure_one(i)
    else:
        samples = [r.values for r in releases]
        steps = run_rounds(samples, measure_one, planned, metric, threshold, seed, out_of_time)
    # a release with no value, or one too few for the gate, has no level to compare: it is
    # left out of the search, and a change point spans it (named by the releases around it)
    measured = [r for r in releases if r.usable]
    labels = [r.version for r in releases]
    decided = {(labels[s.before], labels[s.after]): s.decision
               for s in steps or [] if s.decision is not None}  # fmt: skip
    cps = change_points([r.version for r in measured], [r.values for r in measured], metric,
                        threshold, alpha, decided=decided)  # fmt: skip
    hist = History(package, metric, releases, cps, threshold, alpha)
    if planned is not None and steps is not None:
        used = sum(len(r.records) for r in releases)
        hist.precision = summary(planned, steps, labels, used, alpha, time.monotonic() - t0)
    return hist


def step_x(order: list[str], before: str, after: str) -> float:
    """Where a change point's line goes on the figure (release i at x = i + 1): midway
    between its two releases, found by name. Its ``index`` counts only the releases searched,
    so past a release left out the line was drawn beside the wrong release."""
    return (order.index(before) + order.index(after)) / 2 + 1


def history_figure(hist: History, out_dir: Path) -> list[Path]:
    """tasks/s (or the metric) per release with 95 % CIs; confirmed change points as solid
    lines between the two releases, unconfirmed candidates dashed. Writes PNG and SVG."""
    import pandas as pd
    from plotnine import (
        aes,
        element_text,
        geom_errorbar,
        geom_line,
        geom_point,
        geom_vline,
        ggplot,
        labs,
        theme,
        theme_bw,
    )

    rows = [r.summary() for r in hist.releases if r.values]
    df = pd.DataFrame(rows)
    if "ci_low" not in df:  # no release has an interval
        df["ci_low"] = df["ci_high"] = float("nan")
    order = [r.version for r in hist.releases]
    df["release"] = pd.Categorical(df["version"], categories=order, ordered=True)
    df["x"] = [order.index(v) + 1 for v in df["version"]]
    p = (
        ggplot(df, aes("x", "geo_mean"))
        + geom_line(colour="#999999")
        # a release with one value has no interval: its point alone, no bar
        + geom_errorbar(
            aes(ymin="ci_low", ymax="ci_high"), data=df.dropna(subset=["ci_low"]), width=0.2
        )  # fmt: skip
        + geom_point(size=2.5)
        + theme_bw()
        + theme(axis_text_x=element_text(rotation=30, ha="right"))
        + labs(
            x=f"{hist.package} release",
            y=f"{hist.metric} (geometric mean, 95% CI)",
            title=f"{hist.package}: {hist.metric} per release",
        )
    )
    from plotnine import scale_x_continuous

    p = p + scale_x_continuous(breaks=list(range(1, len(order) + 1)), labels=order)
    for cp in hist.change_points:
        p = p + geom_vline(
            xintercept=step_x(order, cp.before, cp.after),
            linetype="solid" if cp.confirmed else "dashed",
            colour="#c0392b" if cp.confirmed else "#7f8c8d",
        )
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = []
    for ext in ("png", "svg"):
        path = out_dir / f"history_{hist.package}.{ext}"
        p.save(path, width=8, height=4.5, dpi=120, verbose=False)
        paths.append(path)
    return paths
