"""A named culprit's hunks measured, not only listed: each of its largest hunk groups
(``explain``'s function-level changes, grouped as they must be reverted together) is reverted
to the commit before in the culprit's own tree, and the paired gate compares the culprit with
that group reverted against the culprit as it is, at ``alpha`` split over the groups
(Bonferroni). A group's share of the culprit's step is −log(reverted ÷ culprit) ÷ log(the
culprit's ratio), with the interval the gate's gives. Each result is kept in the store as it
is made; ``--max-time`` is checked before each, and what is left is measured next update."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from perflab.analysis.stats import bonferroni_level
from perflab.atlas.gate import Clock
from perflab.atlas.measure import Failed, Measurer
from perflab.atlas.project import Benchmark
from perflab.atlas.store import Store
from perflab.bisect.driver import MOST_MEASURED


def pending(culprit: dict[str, Any]) -> list[dict[str, Any]]:
    """The culprit's hunk groups still to be measured (measured ones carry a ratio or a
    ``not_measured`` reason; listed-only ones are never measured)."""
    return [h for h in culprit.get("hunks", []) if h.get("to_measure")]


def mark(hunks: list[dict[str, Any]], most: int = MOST_MEASURED) -> list[dict[str, Any]]:
    """The listed groups (largest first) with the ``most`` largest marked to be measured and
    the rest said to be listed only."""
    out, n = [], 0
    for h in hunks:
        if h["factor"] == "listed":
            out.append(h)
        elif n < most:
            out.append({**h, "to_measure": True})
            n += 1
        else:
            out.append({**h, "listed_only": True,
                        "not_measured": f"beyond the {most} largest groups"})  # fmt: skip
    return out


def measure(store: Store, m: Measurer, bench: Benchmark, repo: Path, package: str,
            culprit: dict[str, Any], min_effect: float, clock: Clock) -> bool:  # fmt: skip
    """Measure the culprit's pending hunk groups in place (``culprit["hunks"]``), each kept
    in the store's comparisons once made; False when nothing was pending."""
    todo = pending(culprit)
    if not todo:
        return False
    groups = _groups(repo, package, culprit["before"], culprit["sha"])
    n = sum(1 for h in culprit["hunks"] if h.get("to_measure") or "share" in h)
    level = bonferroni_level(bench.alpha, max(1, n))
    whole = math.log(culprit["ratio"])
    for h in todo:
        key = f"{bench.name}:hunk:{culprit['sha']}:{h['factor']}@{level:.8g}"
        got = store.comparison(key)
        if got is None:
            clock.check()
            got = _revert(m, bench, culprit["sha"], groups.get(h["factor"]), package, level,
                          min_effect)  # fmt: skip
            store.keep_comparison(key, bench.name, got)
        h.pop("to_measure", None)
        h.update(got, level=level)
        if "ratio" in got and whole != 0:
            shares = sorted(-math.log(got[k]) / whole for k in ("low", "high"))
            h.update(share=-math.log(got["ratio"]) / whole, share_low=shares[0],
                     share_high=shares[1])  # fmt: skip
    return True


def _groups(repo: Path, package: str, before: str, after: str) -> dict[str, Any]:
    from perflab.bisect.commits import tree
    from perflab.bisect.onward import commit_groups
    from perflab.files import home_dir

    cache = home_dir("bisect", "trees")
    groups, _ = commit_groups(tree(repo, before, cache), tree(repo, after, cache), package)
    return {g.name: g for g in groups}


def _revert(m: Measurer, bench: Benchmark, key: str, group: Any, package: str, level: float,
            min_effect: float) -> dict[str, Any]:  # fmt: skip
    if group is None:
        return {"not_measured": "the group is no longer found between the two trees"}
    try:
        added = [{**t, "factor": group.name} for t in group.transforms(package)]
        return m.revert(bench, key, added, level, min_effect)
    except Failed as f:
        return {"not_measured": f"the revert does not {'apply' if f.kind == 'build' else 'run'}"
                f": {f.reason}"}  # fmt: skip
