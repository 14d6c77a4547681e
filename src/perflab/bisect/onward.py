"""From a culprit onward: the commands that reproduce it, and the hunks of a culprit commit
as explain's hunk screen groups them (the function-level changes that would be reverted
together)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from perflab.errors import PerflabError
from perflab.explain.hunks import diff_units, group_units, path_vocabulary
from perflab.factors.sources import tree_package


def commit_hunks(tree_a: Path, tree_b: Path, package: str) -> list[dict[str, Any]]:
    """The hunk groups between two commits' trees of ``package`` (every module), largest
    first: what explain's screen would revert, one factor a group."""
    try:
        dir_a, _ = tree_package(tree_a, package)
        dir_b, _ = tree_package(tree_b, package)
    except PerflabError:
        return []
    globs = (f"{package}*",)
    units, listed = diff_units(dir_a, dir_b, package, globs, set())
    groups = group_units(units, path_vocabulary(dir_b, package, globs))
    out = [g.to_dict() for g in groups]
    out.sort(key=lambda g: -int(g["lines"]))
    return out + [{"factor": "listed", "units": [], "why": w, "lines": 0} for w in listed]


def hunk_lines(groups: list[dict[str, Any]], most: int = 8) -> list[str]:
    if not groups:
        return ["hunks: no function-level change in the package's modules"]
    out = [f"hunks ({len(groups)} groups, explain's screen would revert each as a factor):"]
    for g in groups[:most]:
        why = f" — {g['why']}" if g["why"] else ""
        out.append(f"  {g['factor']}: {', '.join(g['units'][:4])} ({g['lines']} lines){why}")
    if len(groups) > most:
        out.append(f"  … and {len(groups) - most} more (see --json)")
    return out
