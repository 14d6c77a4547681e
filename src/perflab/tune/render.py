"""A tune's result as text: the recommendation, what each nice level alone is worth, and the
evidence for every factor kept or dropped (the JSON has the same keys, unrounded)."""

from __future__ import annotations

from typing import Any

#: Verdicts printed as themselves (neither a kept nor a dropped claim of the member's own).
SHOWN_AS_SUCH = ("unresolved", "unassessable", "alternative")


def _ratio(m: dict[str, Any]) -> str:
    if m.get("exact"):  # a deterministic score: an interval of width 0 would be invented
        return f"{m['ratio']:.2f}x (exact: the same in each of {m['pairs']} pairs, no interval)"
    return f"{m['ratio']:.2f}x (95% CI {m['ci_low']:.2f}-{m['ci_high']:.2f}, {m['pairs']} pairs)"


def render(result: dict[str, Any]) -> str:
    """The text ``perflab tune`` prints."""
    m = result["measured"]
    best = ", ".join(result["best_set"]) or "(untreated)"
    dropped = result.get("dropped", [])
    lines = [
        f"recommended: {best}"
        + (
            f"  (the search's pick, less {len(dropped)} the data do not support)" if dropped else ""
        ),
        f"measured: {m['base_us']:,.1f} -> {m['best_us']:,.1f} {result['metric']}, "
        f"speed-up {_ratio(m)}"
        if m
        else f"measured: no speed-up ({result.get('measured_why') or 'no pair measured'})",
    ]
    if result.get("levels"):
        lines.append(
            "by level (the set cut to the categories up to the level, + what a knock-in look "
            "showed it needs there; speed-up over the base, measured in the same blocks):"
        )
        seen: dict[tuple[str, ...], str] = {}
        for i, lv in enumerate(result["levels"]):
            name = ("" if i == 0 else "+ ") + lv["level"]
            key = tuple(lv["set"])
            if not lv["set"]:
                what = "nothing of these categories"
            elif key in seen:
                what = f"as {seen[key]}"
            else:
                gained = {f for e in lv.get("added", []) for f in e["factors"]}
                names = ", ".join(f"+{f}" if f in gained else f for f in lv["set"])
                what = f"{names}: " + (
                    _ratio(lv["measured"]) if lv.get("measured") else
                    f"not measured ({lv.get('measured_why') or 'no pair'})"
                )  # fmt: skip
                if g := lv.get("over_nicer"):
                    what += (
                        f"; {g['ratio']:.2f}x over {g['level']} ({g['confidence']:.1%} CI "
                        f"{g['ci_low']:.2f}-{g['ci_high']:.2f}"
                        + ("" if g["ci_low"] > 1 else ": not measurably faster")
                        + ")"
                    )
                what += "".join(
                    f"\n  {'':17s}   +{', '.join(e['factors'])}: {e['reason']}"
                    for e in lv.get("added", [])
                )
                seen[key] = lv["level"]
            lines.append(f"  {name:17s} {what}")
    if result.get("evidence"):
        lines.append("evidence (time without it / with it; a factor stays if measurably slower "
                     "without it):")  # fmt: skip
        for e in result["evidence"]:
            state = e["verdict"] if e["verdict"] in SHOWN_AS_SUCH else (
                "kept" if e["kept"] else "dropped"
            )  # fmt: skip
            lines.append(f"  {state:7s} {', '.join(e['factors'])}: {e['reason']}")
    for a in result.get("alternatives", []):
        lines.append(f"alternative: {a['factor']} instead of {a['instead_of']} (either is enough)")
    if result.get("not_shown_needed"):
        lines.append(
            f"not shown needed (liked by the search, not in the recommended set: the budget "
            f"could not resolve them; about {result['more_runs_estimate']} more knock-out runs "
            "would, an estimate: give a larger --budget):"
        )
        for u in result.get("unresolved", []):
            lines.append(f"  {u['factor']}: ~{u['runs_to_resolve']} runs; {u['reason']}")
    if result.get("fastest_set") and result["fastest_set"] != result["best_set"]:
        fm = result.get("fastest_measured")
        lines.append(
            f"fastest set found: {', '.join(result['fastest_set'])}: "
            + (f"speed-up {_ratio(fm)}" if fm else "not measured")
            + " (holds members not shown needed)"
        )
    if result.get("predicted_us"):
        lines.append(
            f"predicted by the model (a prediction, not a measurement): "
            f"{result['predicted_us']:,.1f}"
        )
    if result.get("precision"):  # tune --precision: what the final blocks reached
        lines.append(result["precision"]["line"])
    lines.append(f"runs: {result['runs']} in {len(result['stages'])} stages")
    return "\n".join(lines)
