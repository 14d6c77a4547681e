"""``explain --precision``: the screen and the focus stages stop when known, as the step does.

Each stage's campaign holds its runs up to the plan's overrun; it runs look by look (the
screen by replicates of its Plackett–Burman design, the focus by rounds) and stops once every
factor is known, the rounds not needed staying planned, never run:

- a factor is known when its effect's interval (at the plan's level) is within ±target
  ("precision reached"), or when it is shown to matter ("decided");
- the screen: "shown to matter" is Holm's step-down over the factors screened
  (``analysis.stats.holm``) at the look's level, the looks' levels (``precision_looks``)
  adding up to ``--screen-alpha``: over all factors and looks the chance that any null
  factor stops the screen as "shown" stays at most ``--screen-alpha``. The survivors are then
  today's rule on the runs made (p below ``--screen-alpha``: a lenient filter; the claims are
  the focus stage's);
- the focus: "shown to matter" is a claim (Holm over the survivors, ``focus_estimates``) at
  the look's level, the looks' levels adding up to ``--alpha``; the stage's estimates and
  claims are those of its last look, at that look's level (the output says which), so over
  its looks the chance of any false claim stays at most ``--alpha``.

Another look that would pass ``--max-time`` (each stage has its own, from its start) is
made at once at the next unspent level and ends the stage ("time budget").
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from perflab.analysis.sizing import t_quantile
from perflab.analysis.stats import holm
from perflab.campaign.plan import run_campaign
from perflab.campaign.store import Store
from perflab.compare import precision as pp
from perflab.explain.plan import Setup

Rows = list[tuple[list[str], Any]]


def screen_looks(setup: Setup, reps: int, design_runs: int) -> pp.Looks:
    """The screen's looks in replicates: planned so that each effect's interval (a difference
    of two halves of the runs: 4σ²/N) matches the step's plan of ``setup.runs`` pairs (2σ²/k),
    at least ``reps`` (the fewest with 4 residual df), up to the plan's overrun."""
    assert setup.step_looks is not None
    planned = max(reps, math.ceil(2 * setup.runs / design_runs))
    levels = pp.precision_looks(reps, planned, pp.most_pairs(planned), setup.screen_alpha)
    return pp.Looks(levels, setup.step_looks.target, setup.step_looks.precision_level, 1)


def screen_known(
    effects: dict[str, dict[str, Any]], level: float, rule: pp.Looks
) -> dict[str, str]:
    """Each screened factor's state at a look: "decided" (Holm over the testable factors
    rejects at ``level``), "precision reached" (its interval within ±target), "open", or
    "unassessable" (no effect: it cannot be learnt by more of the same runs)."""
    testable = [f for f, e in effects.items() if e.get("p") is not None and e.get("se")]
    out = {f: "unassessable" for f in effects if f not in testable}
    out.update({f: "decided" for f, e in effects.items() if e.get("exact")})
    if testable:
        _, shown = holm(np.array([effects[f]["p"] for f in testable], float), level)
        z = float(t_quantile(rule.precision_level, 10**6))  # Huber's p-values are normal
        for f, s in zip(testable, shown, strict=True):
            hw = z * effects[f]["se"]
            effects[f]["half_width"] = math.expm1(hw)
            out[f] = "decided" if s else ("precision reached" if hw <= pp.log_half(
                rule.target) else "open")  # fmt: skip
    return out


def staged(
    store: Store,
    name: str,
    per_look: int,
    rule: pp.Looks,
    budget: tuple[float, float],
    judge: Callable[[Rows, int, float], dict[str, str]],
) -> tuple[Rows, dict[str, Any]]:
    """Run campaign ``name`` (made) ``per_look`` runs a step, judging at each look due
    (``judge(rows, step, level)`` → each factor's state) until every factor is known or the
    looks end; the rows run and what the looks reached (with its ``line``)."""
    limit, step_s = budget
    t0 = time.monotonic()
    seen: list[dict[str, Any]] = []
    rows: Rows = []
    why, n = "most runs", 0
    for n in range(1, rule.last + 1):
        if any(seq < per_look * n for seq, _ in store.pending(name)):
            run_campaign(store, name, max_runs=per_look)
        recs = dict(store.records_by_seq(name))
        rows = [(list(t), recs.get(seq)) for seq, t in store.planned(name)][: per_look * n]
        late = n >= 2 and time.monotonic() - t0 + step_s > limit
        level = rule.due(n, late)
        if level is None:
            continue
        states = judge(rows, n, level)
        seen.append({"n": n, "level": level, "states": states})
        if all(s != "open" for s in states.values()):  # no factor at all: nothing to learn
            why = "every factor known"
            break
        if late:
            why = "time budget"
            break
    return rows, summary(rule, why, n, seen, time.monotonic() - t0)


def summary(
    rule: pp.Looks, why: str, n: int, seen: list[dict[str, Any]], wall_s: float
) -> dict[str, Any]:
    """What a stage's looks reached against its plan, and the line that says it."""
    planned = max(rule.levels, key=rule.levels.__getitem__)
    alpha = sum(rule.levels.values())
    states = seen[-1]["states"] if seen else {}
    counts = {s: sum(v == s for v in states.values()) for s in sorted(set(states.values()))}
    said = ", ".join(f"{k} {v}" for k, v in counts.items()) or "no look made"
    line = (f"{why} after {n} of {planned} planned ({rule.last} at most): {said}; "
            f"{rule.spent(alpha).replace(' runs per side', '')}")  # fmt: skip
    return {"stopped": why, "steps": n, "planned": planned, "most": rule.last,
            "levels": {str(k): v for k, v in rule.levels.items()}, "looks": seen,
            "level": seen[-1]["level"] if seen else None, "wall_s": wall_s,
            "line": line}  # fmt: skip


def focus_known(est: dict[str, Any], factors: list[str], rule: pp.Looks) -> dict[str, str]:
    """Each focused factor's state at a look: "decided" (claimed at the look's level),
    "precision reached" (the interval of its effect B+f / B within ±target), or "open"."""
    out = {}
    q = t_quantile(rule.precision_level, max(1, int(est["df_resid"])))
    for f in factors:
        e = est["factors"][f]
        hw = q * e["se_log"] if e.get("se_log") is not None else None
        if e["claimed"]:
            out[f] = "decided"
        elif hw is not None and hw <= pp.log_half(rule.target):
            out[f] = "precision reached"
        else:
            out[f] = "open"
    return out


def run_stage(
    store: Store,
    name: str,
    per_look: int,
    rule: pp.Looks,
    setup: Setup,
    judge: Callable[[Rows, int, float], dict[str, str]],
) -> tuple[Rows, dict[str, Any]]:
    """``staged`` with the stage's time budget: ``--max-time`` from the stage's start, a
    look's runs priced at the step's planned seconds a run."""
    limit, round_s = setup.step_budget or (math.inf, 0.0)
    return staged(store, name, per_look, rule, (limit, per_look * round_s / 2), judge)
