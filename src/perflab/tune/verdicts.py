"""The verdicts of members kept with a group they were never tested apart from (the
reduction, tune/reduce.py): no ratio of their own, the group named, a split look to resolve
them. The group's evidence stays the group's."""

from __future__ import annotations

from perflab.tune.knockout import Evidence


def unassessable(e: Evidence) -> list[Evidence]:
    """Each member of a group never varied apart, whose drop the looks did not find slower:
    kept with the group, no ratio of its own, and a split look would assess it."""
    group = ", ".join(e.factors)
    ci = f"{e.ratio:.3f}x, CI {e.ci_low:.3f}-{e.ci_high:.3f}" if e.ratio and e.ci_low else "none"
    out = []
    for f in e.factors:
        why = (
            f"kept with {{{group}}}, unassessable: its members were never varied apart (no run "
            f"had one without the others), so the group's drop ({ci}, {e.runs} runs) cannot "
            f"tell members that do nothing from members whose effects cancel; a split look "
            f"would assess each"
        )
        out.append(Evidence([f], True, "unassessable", runs=0, reason=why, group=list(e.factors)))
    return out


def unresolved(e: Evidence) -> list[Evidence]:
    """A group shown slower whose members were never tested alone: each member is kept with
    the group, not resolved; the group's ratio stays the group's (in the reason), never the
    member's own, and a split look of ``least_runs(len(group))`` runs would resolve it."""
    group = ", ".join(e.factors)
    ci = f"{e.ratio:.3f}x, CI {e.ci_low:.3f}-{e.ci_high:.3f}, {e.runs} runs"
    out = []
    for f in e.factors:
        why = (
            f"kept with {{{group}}}, not resolved: the group as a whole is slower without it "
            f"(the group's ratio {ci}); {f} alone was never tested, so its own need is unknown"
        )
        out.append(Evidence([f], True, "unresolved", runs=0, reason=why, group=list(e.factors)))
    return out
