"""From a culprit onward: the commands that reproduce it, and the hunks of a culprit commit
as explain's hunk screen groups them (the function-level changes that would be reverted
together), each measured: the culprit with that group reverted to the commit before,
paired against the culprit as it is."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from perflab.analysis.stats import bonferroni_level
from perflab.bisect.driver import (
    MOST_MEASURED,
    Settings,
    State,
    Tally,
    compare_points,
    share_text,
)
from perflab.compare.gate import Side
from perflab.errors import PerflabError
from perflab.explain.hunks import Group, diff_units, group_units, path_vocabulary
from perflab.factors.sources import tree_package
from perflab.prepare import Prepared
from perflab.spec import RunSpec


def commit_groups(tree_a: Path, tree_b: Path, package: str) -> tuple[list[Group], list[str]]:
    """The hunk groups between two commits' trees of ``package`` (every module), largest
    first, and what could only be listed (explain's ``diff_units``)."""
    try:
        dir_a, _ = tree_package(tree_a, package)
        dir_b, _ = tree_package(tree_b, package)
    except PerflabError:
        return [], []
    globs = (f"{package}*",)
    units, listed = diff_units(dir_a, dir_b, package, globs, set())
    groups = group_units(units, path_vocabulary(dir_b, package, globs))
    groups.sort(key=lambda g: -sum(u.lines for u in g.units))
    return groups, listed


def explain_culprit(
    culprit: dict[str, Any],
    culprit_ready: Prepared,
    trees: tuple[Path, Path],
    package: str,
    settings: Settings,
    state: State,
    prepare: Callable[[RunSpec], Prepared],
    on_step: Callable[[str], None] | None = None,
    most: int = MOST_MEASURED,
    tally: Tally | None = None,
    base: RunSpec | None = None,
) -> dict[str, Any]:
    """The culprit's ``most`` largest hunk groups measured together (``together``: a
    factorial, each group's share, its effect alone and every two-way interaction with
    intervals) when there are at most ``factorial.MOST_GROUPS`` of them; more (or with
    ``--precision``) are measured one at a time (``measure_hunks``), their interactions said
    unassessable. The rest are
    listed. ``base``: the spec the points were made from, whose stored parts plan each
    revert with ``--precision`` (as they plan the search's comparisons; the culprit's own
    spec holds its build, which the parts' signature does not). ``{"hunk_groups",
    "hunk_interactions", "hunk_design"}``."""
    from perflab.bisect.factorial import MOST_GROUPS
    from perflab.bisect.together import measure_together

    groups, listed = commit_groups(trees[0], trees[1], package)
    measured = groups[: max(0, most)]
    if settings.precision is not None or not 1 <= len(measured) <= MOST_GROUPS:
        if settings.precision is not None:  # its window and runs are planned per comparison
            why = ("measured one at a time: interactions unassessable (with --precision each "
                   "revert is a planned comparison; the factorial has no plan)")  # fmt: skip
        else:
            why = (f"measured one at a time: interactions unassessable (a resolution-V "
                   f"fraction over {len(measured)} groups is not built beyond "
                   f"{MOST_GROUPS})")  # fmt: skip
        out = measure_hunks(culprit, culprit_ready, trees, package, settings, state, prepare,
                            on_step, most, base)  # fmt: skip
        design = {"design": "one at a time", "why": why} if measured else None
        return {"hunk_groups": out, "hunk_interactions": [], "hunk_design": design}
    got = measure_together(culprit, culprit_ready, measured, package, settings, state, prepare,
                           on_step, None, tally)  # fmt: skip
    beyond = f"listed, not measured: beyond the {len(measured)} largest groups (--hunk-groups)"
    rest = [{**g.to_dict(), "listed_only": True, "not_measured": beyond}
            for g in groups[len(measured):]]  # fmt: skip
    rest += [{"factor": "listed", "units": [], "why": w, "lines": 0} for w in listed]
    return {"hunk_groups": got["groups"] + rest, "hunk_interactions": got["interactions"],
            "hunk_design": got["design"]}  # fmt: skip


def measure_hunks(
    culprit: dict[str, Any],
    culprit_ready: Prepared,
    trees: tuple[Path, Path],
    package: str,
    settings: Settings,
    state: State,
    prepare: Callable[[RunSpec], Prepared],
    on_step: Callable[[str], None] | None = None,
    most: int = MOST_MEASURED,
    base: RunSpec | None = None,
) -> list[dict[str, Any]]:
    """Each of the culprit's ``most`` largest hunk groups measured: the culprit's
    spec with the group reverted to the commit before (explain's transforms), paired against
    the culprit as it is, each at ``alpha / groups`` (Bonferroni over the groups measured).
    Its share of the culprit's step is −log(reverted/culprit) / log(culprit's ratio). A group
    whose revert does not apply or run is named with why; a group beyond the ``most`` largest
    is listed, marked ``"listed_only": True``. Kept in ``state``: a rerun reuses."""
    groups, listed = commit_groups(trees[0], trees[1], package)
    measured = groups[: max(0, most)]
    level = bonferroni_level(settings.alpha, len(measured))
    whole = math.log(culprit["step"]["ratio"])
    out = []
    for g in measured:
        key = f"hunk:{culprit['key']}:{g.name}@{level:.8g}"
        if key not in state.data.setdefault("hunks", {}):
            if on_step:
                on_step(f"measuring hunk group {g.name} of {culprit['key'][:10]} (reverted)")
            state.data["hunks"][key] = _revert(g, culprit_ready, package, settings, level, prepare,
                                               base)  # fmt: skip
            state.save()
        else:
            state.reused += 1
        entry = {**g.to_dict(), **state.data["hunks"][key], "level": level}
        if "ratio" in entry:
            shares = sorted(-math.log(entry[k]) / whole for k in ("low", "high"))
            entry.update(share=-math.log(entry["ratio"]) / whole, share_low=shares[0],
                         share_high=shares[1])  # fmt: skip
        out.append(entry)
    beyond = f"listed, not measured: beyond the {len(measured)} largest groups (--hunk-groups)"
    out += [{**g.to_dict(), "listed_only": True, "not_measured": beyond}
            for g in groups[len(measured):]]  # fmt: skip
    return out + [{"factor": "listed", "units": [], "why": w, "lines": 0} for w in listed]


def _revert(
    g: Group,
    culprit_ready: Prepared,
    package: str,
    settings: Settings,
    level: float,
    prepare: Callable[[RunSpec], Prepared],
    base: RunSpec | None = None,
) -> dict[str, Any]:
    """One paired comparison: the culprit (A) against the culprit with ``g`` reverted (B);
    with ``--precision`` planned from ``base``'s stored parts."""
    added = [{**t, "factor": g.name} for t in g.transforms(package)]
    spec_b = culprit_ready.spec
    try:
        reverted = prepare(replace(spec_b, transforms=[*spec_b.transforms, *added]))
    except PerflabError as exc:
        return {"not_measured": f"the revert does not apply: {exc}"}
    a = Side("culprit", spec_b, prepared=culprit_ready)
    b = Side(f"reverted {g.name}", reverted.spec, prepared=reverted)
    cmp = compare_points(a, b, settings, level, base=base)
    if cmp.failed is not None or cmp.decision is None:
        lines = [ln for ln in ((cmp.failed.error if cmp.failed else "") or "").splitlines() if ln]
        return {"not_measured": f"does not run: {lines[-1] if lines else 'failed'}"}
    d = cmp.decision
    return {"ratio": d.ratio, "low": d.ci_low, "high": d.ci_high, "verdict": d.verdict,
            "runs": len(a.values) + len(b.values)}  # fmt: skip


def hunk_lines(
    groups: list[dict[str, Any]], most: int = 8, design: dict[str, Any] | None = None,
    interactions: list[dict[str, Any]] | None = None,
) -> list[str]:  # fmt: skip
    """The text of a culprit's hunk groups: each with what reverting it measured (measured
    together: its share, its effect alone, and the interactions, from ``design``); the groups
    listed but not measured (beyond ``--hunk-groups``) said as such. Every measured group is
    shown, and listed ones up to ``most`` lines of groups in all."""
    if not groups:
        return ["hunks: no function-level change in the package's modules"]
    only = [g for g in groups if g.get("listed_only")]
    n_measured = sum("level" in g for g in groups)
    head = f"hunks ({len(groups)} groups"
    level = next((g["level"] for g in groups if "level" in g), None)
    if design and design.get("cells"):
        head += _together_head(design)
    elif level is not None:
        head += (f"; the {n_measured} largest each reverted alone, measured "
                 f"against the culprit at level {level:.2g}")  # fmt: skip
    elif not only:
        head += ", explain's screen would revert each as a factor"
    out = [head + (f"; {len(only)} listed, not measured (--hunk-groups)):" if only else "):")]
    shown = max(most, n_measured)
    for g in groups[:shown]:
        why = f" — {g['why']}" if g["why"] else ""
        out.append(f"  {g['factor']}: {', '.join(g['units'][:4])} ({g['lines']} lines){why}")
        if "alone_share" in g and design and design["groups"] == 1:  # alone = share = revert
            out.append(
                f"    share of the culprit's step {g['share']:.0%} "
                f"({share_text(g['share_low'], g['share_high'])}); reverted: "
                f"{g['ratio']:.3f}× ({g['low']:.3f}–{g['high']:.3f}), {g['verdict']}"
            )
        elif "alone_share" in g:
            out.append(
                f"    share of the culprit's step {g['share']:.0%} "
                f"({share_text(g['share_low'], g['share_high'])}), its interactions "
                f"split evenly; alone on the commit before {g['alone_share']:.0%} "
                f"({share_text(g['alone_low'], g['alone_high'])}); reverted alone "
                f"{g['ratio']:.3f}× ({g['low']:.3f}–{g['high']:.3f}), {g['verdict']}"
            )
        elif "ratio" in g:
            share = share_text(g["share_low"], g["share_high"])
            out.append(f"    reverted: {g['ratio']:.3f}× ({g['low']:.3f}–{g['high']:.3f}), "
                       f"{g['verdict']}; share of the culprit's step {g['share']:.0%} "
                       f"({share}), {g['runs']} runs")  # fmt: skip
        elif g.get("listed_only"):
            out.append("    listed, not measured (beyond --hunk-groups)")
        elif "not_measured" in g:
            out.append(f"    not measured: {g['not_measured']}")
    if len(groups) > shown:
        out.append(f"  … and {len(groups) - shown} more, listed, not measured (see --json)")
    return out + _together_tail(design, interactions or [])


def _together_head(d: dict[str, Any]) -> str:
    failed = f" ({d['failed_runs']} failed)" if d["failed_runs"] else ""
    level = f", intervals at level {d['level']:.2g}" if d["level"] is not None else ""
    cells = f"{d['cells']} cells × {d['replicates']} replicates = {d['runs']} runs"
    if d.get("stopped"):  # the looks (factorial.sequential): why the replicates ended
        cells += f" (stopped: {d['stopped']}, {d['most_replicates']} replicates at most)"
    if d["groups"] == 1:
        return f"; measured: the culprit against it reverted, {cells}{failed}{level}"
    return f"; the {d['groups']} largest measured together: {d['design']}, {cells}{failed}{level}"


def _together_tail(d: dict[str, Any] | None, interactions: list[dict[str, Any]]) -> list[str]:
    """The interactions, what was aliased, and the groups' whole share (measured together);
    or why interactions were not assessed (one at a time)."""
    if not d:
        return []
    if not d.get("cells"):
        return [f"  {d['why']}"]
    if d["groups"] == 1:
        return []
    out = []
    for it in interactions:
        pair = " × ".join(it["groups"])
        if "ratio" not in it:
            out.append(f"  interaction {pair}: {it['not_measured']}")
            continue
        out.append(f"  interaction {pair}: {it['ratio']:.3f}× ({it['low']:.3f}–"
                   f"{it['high']:.3f}) beyond each alone, {it['verdict']}; "
                   f"{it['share']:.0%} ({share_text(it['share_low'], it['share_high'])}) of "
                   "the culprit's step")  # fmt: skip
    out.append(f"  {d['aliasing']}")
    if d["total"]:
        t = d["total"]
        out.append(
            f"  the groups measured, together: {t['share']:.0%} "
            f"({share_text(t['share_low'], t['share_high'])}) of the culprit's step"
        )
    return out
