"""A confirmed step's commits: ``bisect.search``'s noisy bisection over the first-parent
commits of its window (each comparison the paired gate, kept in the store, so an update
killed mid-search resumes it without repeating one), then each culprit's hunks, the
function-level changes between its parent's tree and its own (``bisect.onward``), the
largest of them measured next (``atlas.hunks``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from perflab.atlas.gate import Clock, compare
from perflab.atlas.hunks import mark
from perflab.atlas.measure import Failed, Measurer
from perflab.atlas.project import Atlas, Benchmark
from perflab.atlas.store import Store
from perflab.bisect.search import PointFailed, Search, Step, bisect
from perflab.errors import PerflabError


def search(store: Store, m: Measurer, bench: Benchmark, atlas: Atlas,
           points: list[dict[str, Any]], clock: Clock) -> Search:  # fmt: skip
    """The bisection over ``points`` (the window's first-parent commits, oldest first)."""
    keys = [p["key"] for p in points]

    def measure(a: int, b: int, level: float) -> Step:
        failed = store.failures(bench.name)
        for i in (a, b):
            if keys[i] in failed:
                raise PointFailed(i, failed[keys[i]][1])
        try:
            r = compare(store, m, bench, keys[a], keys[b], level, atlas.min_effect, clock)
        except Failed as f:
            store.fail(bench.name, f.key, f.kind, f.reason)
            raise PointFailed(keys.index(f.key), f.reason) from None
        return Step(a, b, r["ratio"], r["low"], r["high"], r["verdict"], r["runs"], level)

    return bisect(len(keys), measure, bench.alpha)


def hunks(repo: Path, package: str, before: str, after: str) -> list[dict[str, Any]]:
    """The hunk groups (function-level changes) from ``before``'s tree to ``after``'s,
    largest first (``atlas.hunks`` measures them)."""
    from perflab.bisect.commits import tree
    from perflab.bisect.onward import commit_groups
    from perflab.files import home_dir

    try:
        cache = home_dir("bisect", "trees")
        groups, listed = commit_groups(tree(repo, before, cache), tree(repo, after, cache), package)
    except PerflabError as exc:
        return [{"factor": "listed", "units": [], "why": f"no hunks: {exc}", "lines": 0}]
    return [g.to_dict() for g in groups] + [
        {"factor": "listed", "units": [], "why": w, "lines": 0} for w in listed
    ]


def culprits(found: Search, points: list[dict[str, Any]], repo: Path, package: str
             ) -> list[dict[str, Any]]:  # fmt: skip
    """Each culprit: its commit, subject, PR, the commit before, share with its interval,
    its comparison, the candidates when skipped commits hide which one it is, and hunks."""
    out = []
    for c in found.culprits:
        p, before = points[c.index], points[c.before]
        out.append({
            "sha": p["key"], "subject": p["subject"], "pr": p["pr"], "before": before["key"],
            "share": c.share, "share_low": c.share_low, "share_high": c.share_high,
            "ratio": c.step.ratio, "low": c.step.low, "high": c.step.high,
            "candidates": [points[i]["key"] for i in c.candidates],
            "hunks": mark(hunks(repo, package, before["key"], p["key"])),
        })  # fmt: skip
    return out
