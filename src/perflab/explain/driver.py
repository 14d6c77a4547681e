"""The stages of ``perflab explain`` run in order, each a resumable campaign (see plan.py)."""

from __future__ import annotations

import math
import random
import time
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from perflab.campaign.store import Store
from perflab.compare.stats import HIGHER_IS_BETTER, decide
from perflab.explain.estimate import ALL, A, B, contained, focus_estimates, screen_effects
from perflab.explain.plan import (
    ExplainPlan,
    OnStage,
    Setup,
    add_module_revert,
    add_sources,
    made,
    make_plan,
    rounds,
    stage,
    value,
)
from perflab.explain.sequential import run_step
from perflab.explain.stopping import focus_known, run_stage, screen_known, screen_looks

#: Residual degrees of freedom the screen leaves for its error estimate.
SCREEN_DF = 4
#: Tasks of the smoke run of each factor (an engine target).
SMOKE_TASKS = 100


def explain(
    open_store: Callable[[], Store], setup: Setup, on_stage: OnStage | None = None
) -> dict[str, Any]:
    """Prepare, then step → screen → focus; the result as plain data (``render.py``). The
    store is opened only once the input is known good: bad input stores nothing."""
    t0 = time.monotonic()
    prep = make_plan(setup)
    store = open_store()
    assert prep.base_b is not None
    base = prep.base_b
    metric = setup.metrics[0]
    out: dict[str, Any] = {
        "name": setup.name,
        "package": setup.package,
        "a": setup.a,
        "b": setup.b,
        "target": base.target,
        "workload": base.workload,
        "command": base.command,
        "metrics": setup.metrics,
        "alpha": setup.alpha,
        "threshold": setup.threshold,
        "catalog": str(prep.catalog),
        "factors": prep.factors,
        "defaults": prep.defaults,
        "groups": prep.groups,
        "listed": prep.listed,
        "safety": prep.safety,
        "stages": {},
    }
    step = _measure_step(store, setup, prep, on_stage)
    out["stages"]["step"] = step.pop("rows")
    out["step"] = step
    verdict = step_verdict(step)
    if verdict:
        out["verdict"] = verdict
        return _done(out, store, setup, t0)
    add_sources(setup, prep)
    _smoke(store, setup, prep, on_stage)
    out.update(catalog=str(prep.catalog), factors=prep.factors, groups=prep.groups)
    screen = _screen(store, setup, prep, on_stage)
    out["screen"] = screen
    if screen.get("cause"):  # too few runs measured to estimate every main effect
        out["verdict"] = f"screen failed: {screen['failed']} runs, e.g. {screen['cause']}"
        return _done(out, store, setup, t0)
    survivors = [f for f, e in screen["effects"].items() if survives(e, setup.screen_alpha)]
    out["survivors"] = survivors
    out["focus"] = _focus(store, setup, prep, survivors, on_stage)
    claimed = [f for f, e in out["focus"][metric]["factors"].items() if e["claimed"]]
    out["claimed"] = claimed
    out["verdict"] = "explained" if claimed else "not explained by any factor"
    return _done(out, store, setup, t0)


def step_verdict(step: dict[str, Any]) -> str | None:
    """The explanation's verdict when the step ends it: failed, undecided (``--precision``:
    its looks ran out of time or runs; an undecided step is not "nothing to explain"), or
    nothing to explain (no difference, or, stopped on its precision, an interval within the
    target around no change); None when the step is there to explain."""
    if step.get("failed"):
        return f"step failed: {step['failed']}"
    if step["different"]:
        return None
    stopped = (step.get("precision") or {}).get("stopped", "precision reached")
    if step["verdict"] == "inconclusive" and stopped != "precision reached":
        return f"step undecided ({stopped})"
    return "nothing to explain"


def _measure_step(
    store: Store, setup: Setup, prep: ExplainPlan, on_stage: OnStage | None
) -> dict[str, Any]:
    """The step stage: every planned round (``--runs``), or with ``setup.step_looks``
    (``--precision``) round by round until it is known (``sequential.run_step``). The
    step's decision, with its runs made in ``rows``."""
    assert prep.base_b is not None
    looks = setup.step_looks
    plan = rounds({A: ["release_a"], B: []}, looks.last if looks else setup.runs, setup.seed)
    sets = [s for _, _, s in plan]
    name, info = f"{setup.name}.0-step", {"explain": setup.name, "stage": "step"}
    every = ["release_a", *prep.factors]
    if looks is None:
        rows = stage(store, name, prep.base_b, prep.catalog, every, sets, info, on_stage)
        step = _step(plan, rows, metric_of(setup), setup)
    else:
        made(store, name, prep.base_b, prep.catalog, every, sets, info)
        budget, round_s = setup.step_budget or (math.inf, 0.0)
        t0 = time.monotonic()

        def out_of_time() -> bool:
            return time.monotonic() - t0 + round_s > budget

        rows, step = run_step(store, name, plan, setup, on_stage, out_of_time)
        if "ratio" not in step:  # fewer than 2 pairs measured: what stopped the runs
            step["failed"] = cause([rec for _, rec in rows])
    if prep.base_b.command is not None:  # a user's program: which release each side imported
        step["releases"] = release_proofs(plan[: len(rows)], rows, setup)
        unproven = [p["unproven"] for p in step["releases"].values() if p.get("unproven")]
        step["failed"] = step.get("failed") or (unproven[0] if unproven else None)
    return {**step, "rows": sum(rec is not None for _, rec in rows)}


def metric_of(setup: Setup) -> str:
    """The metric that decides (the first of ``--metric``)."""
    return setup.metrics[0]


def _done(out: dict[str, Any], store: Store, setup: Setup, t0: float) -> dict[str, Any]:
    names = [c for c in store.campaign_names() if c.startswith(f"{setup.name}.")]
    out["runs"] = sum(store.counts(c)["done"] for c in names)
    out["campaigns"] = names
    out["elapsed_s"] = time.monotonic() - t0
    return out


def _step(
    plan: list[tuple[str, int, list[str]]], rows: list[Any], metric: str, setup: Setup
) -> dict[str, Any]:
    """A vs B paired by round (the compare gate's test, alpha and threshold)."""
    by: dict[int, dict[str, float]] = {}
    for (cond, r, _), (_, rec) in zip(plan, rows, strict=True):
        v = value(rec, metric)
        if v is not None:
            by.setdefault(r, {})[cond] = v
    pairs = [d for d in by.values() if A in d and B in d]
    if len(pairs) < 2:
        return {
            "different": False,
            "verdict": "too few runs",
            "n": len(pairs),
            "failed": cause([rec for _, rec in rows]),
        }
    d = decide(
        [p[A] for p in pairs],
        [p[B] for p in pairs],
        setup.threshold,
        setup.alpha,
        metric in HIGHER_IS_BETTER,
        paired=True,
    )
    return {**d.to_dict(), "different": d.different, "metric": metric}


def _smoke(store: Store, setup: Setup, prep: ExplainPlan, on_stage: OnStage | None) -> None:
    """One short run of each factor alone: a change that does not run without others (it
    imports, but fails at run time) is listed with the cause and not screened."""
    assert prep.base_b is not None
    base = prep.base_b
    if base.command is None and base.tasks:  # a short run is enough to fail
        base = replace(base, tasks=min(base.tasks, SMOKE_TASKS))
    rows = stage(
        store,
        f"{setup.name}.1-smoke",
        base,
        prep.catalog,
        prep.factors,
        [[f] for f in prep.factors],
        {"explain": setup.name, "stage": "smoke"},
        on_stage,
    )
    bad = {s[0]: cause([rec]) for s, rec in rows if rec is None or rec.status != "ok"}
    prep.listed += [f"{f}: does not run alone ({why[:160]})" for f, why in bad.items()]
    prep.factors = [f for f in prep.factors if f not in bad]
    coarse = add_module_revert(setup, prep, sorted(bad))
    if coarse:  # the modules of what does not run alone, reverted whole: one coarse factor
        rows = stage(
            store,
            f"{setup.name}.1-smoke-modules",
            base,
            prep.catalog,
            [*prep.factors, coarse],
            [[coarse]],
            {"explain": setup.name, "stage": "smoke"},
            on_stage,
        )
        if all(rec is not None and rec.status == "ok" for _, rec in rows):
            prep.factors.append(coarse)
        else:
            prep.listed.append(f"{coarse}: does not run ({cause([r for _, r in rows])[:160]})")


def _screen(
    store: Store, setup: Setup, prep: ExplainPlan, on_stage: OnStage | None
) -> dict[str, Any]:
    """Plackett–Burman over every factor, replicated, each replicate in its own order."""
    factors = prep.factors
    x = _pb(len(factors))
    n = len(x)
    reps = setup.screen_reps or max(1, math.ceil((len(factors) + 1 + SCREEN_DF) / n))
    rule = screen_looks(setup, reps, n) if setup.step_looks else None  # --precision
    rng = random.Random(setup.seed + 1)
    sets = []
    for _ in range(rule.last if rule else reps):
        for i in rng.sample(range(n), n):
            sets.append([f for f, on in zip(factors, x[i], strict=True) if on > 0])
    assert prep.base_b is not None
    name, seq = f"{setup.name}.2-screen", None
    info = {"explain": setup.name, "stage": "screen", "design": "plackett-burman",
            "replicates": rule.last if rule else reps}  # fmt: skip
    if rule is None:
        rows = stage(store, name, prep.base_b, prep.catalog, factors, sets, info, on_stage)
    else:
        made(store, name, prep.base_b, prep.catalog, factors, sets, info)
        if on_stage:
            on_stage(name, len(store.pending(name)))
        rows, seq = run_stage(store, name, n, rule, setup, lambda rows, _, level: screen_known(
            screen_summary(rows, factors, metric_of(setup))["effects"], level, rule))  # fmt: skip
        reps = len(rows) // n
    out = screen_summary(rows, factors, setup.metrics[0])
    if seq:
        out["precision"] = {**seq, "line": f"screen: {seq['line']}; Holm over {len(factors)} "
                                           "factors at each look"}  # fmt: skip
    return {**out, "replicates": reps, "design_runs": n} if not out.get("cause") else out


def screen_summary(
    rows: list[tuple[list[str], Any]], factors: list[str], metric: str
) -> dict[str, Any]:
    """The screen's effects from its runs (set, record). A factor on in every failed run is
    unassessable: the runs that would show its effect are the ones that failed, so it gets
    no effect and no p (it was p = 1.0, a number of nothing) and the cause instead."""
    good = [(s, v) for s, rec in rows if (v := value(rec, metric)) is not None]
    failed = [s for s, rec in rows if value(rec, metric) is None]
    runs = len(rows)
    if len(good) <= len(factors) + 1:  # too few ok runs: no effect at all
        return {
            "runs": runs,
            "failed": len(failed),
            "cause": cause([r for _, r in rows]),
            "effects": {f: {"effect": None, "p": None, "ratio": None} for f in factors},
        }
    culprits = sorted(set.intersection(*map(set, failed))) if failed else []
    why = cause([r for _, r in rows])
    # a factor constant among the ok runs (off in all of them, when it fails whenever on)
    # makes the fit singular: fitted without it, the others keep their meaning
    on = {f: sum(f in s for s, _ in good) for f in factors}
    fitted = [f for f in factors if f not in culprits and 0 < on[f] < len(good)]
    effects = screen_effects(good, fitted) if fitted else {}
    for f in factors:
        if f in culprits:  # on in every failed run: it does not run alone; not carried on
            effects[f] = {
                "effect": None, "p": None, "ratio": None, "failed": True,
                "why": f"unassessable: on in every failed run ({len(failed)} of {runs}): {why}",
            }  # fmt: skip
        elif f not in effects:
            effects[f] = {"effect": None, "p": None, "ratio": None,
                          "why": "unassessable: never varies among the ok runs"}  # fmt: skip
    effects = {f: effects[f] for f in factors}
    return {"runs": runs, "failed": len(failed), "does_not_run": culprits, "effects": effects}


def release_proofs(
    plan: list[tuple[str, int, list[str]]], rows: list[Any], setup: Setup
) -> dict[str, dict[str, Any]]:
    """Per side of the step, the release its measured runs imported: A's from its package
    factor's proof, B's from the run's own (``measurement.releases``); the versions and
    processes seen, and why a side is unproven (an ok run where no process imported it)."""
    out: dict[str, dict[str, Any]] = {}
    for cond, want in ((A, setup.a), (B, setup.b)):
        recs = [rec for (c, _, _), (_, rec) in zip(plan, rows, strict=True)
                if c == cond and rec is not None and rec.status == "ok"]  # fmt: skip
        proofs = [_side_proof(rec, cond, want) for rec in recs]
        seen = [p for ps in proofs for p in ps]
        side: dict[str, Any] = {
            "release": want,
            "runs": len(recs),
            "proven": sum(1 for ps in proofs if ps),
            "versions": sorted({str(p.get("version")) for p in seen}),
            "processes": sorted({str((p.get("process") or {}).get("argv0")) for p in seen}),
        }
        if side["proven"] < side["runs"]:
            side["unproven"] = (
                f"release {cond} ({setup.package} {want}): in {side['runs'] - side['proven']} "
                f"of {side['runs']} runs no Python process of the command imported it"
            )
        out[cond] = side
    return out


def _side_proof(rec: Any, cond: str, want: str) -> list[dict[str, Any]]:
    m = rec.measurement or {}
    if cond == A:
        return list((m.get("treated") or {}).get("release_a") or [])
    mine = [v for k, v in (m.get("releases") or {}).items() if k.partition("==")[2] == want]
    return [p for ps in mine for p in ps]


def cause(records: list[Any]) -> str:
    """The last line of the last failed run's error: what stopped the runs."""
    for rec in reversed(records):
        if rec is not None and rec.status != "ok":
            lines = [ln.strip() for ln in (rec.error or "").splitlines() if ln.strip()]
            return lines[-1] if lines else rec.status
    return "no run was measured"


def _pb(k: int) -> Any:
    """A Plackett–Burman design for ``k`` factors: pyDOE3's for the smallest size it has
    (N = 2^m, 12·2^m or 20·2^m) at ``k`` or more columns, the first ``k`` kept."""
    from pyDOE3 import pbdesign

    for cols in range(k, 4 * k + 8):
        try:
            return pbdesign(cols)[:, :k]
        except AssertionError:  # no design of this size: try a wider one
            continue
    raise AssertionError(f"no Plackett-Burman design for {k} factors")


def _focus(
    store: Store, setup: Setup, prep: ExplainPlan, survivors: list[str], on_stage: OnStage | None
) -> dict[str, Any]:
    """A, B, B + each survivor, B + all survivors, in rounds; estimates per metric."""
    conds: dict[str, list[str]] = {A: ["release_a"], B: []}
    conds.update({f: [f] for f in survivors})
    if len(survivors) > 1:
        conds[ALL] = list(survivors)
    rule = setup.step_looks  # --precision: the step's looks, their levels adding up to alpha
    plan = rounds(conds, rule.last if rule else setup.runs, setup.seed + 2)
    assert prep.base_b is not None
    name, info, seq = f"{setup.name}.3-focus", {"explain": setup.name, "stage": "focus"}, None
    sets = [s for _, _, s in plan]
    if rule is None:
        rows = stage(store, name, prep.base_b, prep.catalog, prep.factors, sets, info, on_stage)
    else:
        made(store, name, prep.base_b, prep.catalog, prep.factors, sets, info)
        if on_stage:
            on_stage(name, len(store.pending(name)))

        def judge(rows: list[Any], _: int, level: float) -> dict[str, str]:
            data = _focus_data(plan, rows, metric_of(setup))
            est = focus_estimates(data, survivors, level, setup.threshold)
            return focus_known(est, survivors, rule)

        rows, seq = run_stage(store, name, len(conds), rule, setup, judge)
    alpha = seq["level"] if seq and seq["level"] else setup.alpha  # the last look's, spent
    out: dict[str, Any] = {"runs": len(rows), "conditions": list(conds)}
    if seq:
        out["precision"] = {**seq, "line": f"focus: {seq['line']}; estimates at its last look"}
    for metric in setup.metrics:
        data = _focus_data(plan, rows, metric)
        est = focus_estimates(data, survivors, alpha, setup.threshold)
        claimed = [f for f, e in est["factors"].items() if e["claimed"]]
        est["contained"] = contained(prep.tables, claimed)
        out[metric] = est
    return out


def _focus_data(
    plan: list[tuple[str, int, list[str]]], rows: list[Any], metric: str
) -> list[tuple[str, int, float]]:
    """The focus runs' (condition, round, value) of ``metric``, the runs with a value."""
    return [(c, r, v) for (c, r, _), (_, rec) in zip(plan, rows, strict=False)
            if (v := value(rec, metric)) is not None]  # fmt: skip


def survives(effect: dict[str, Any], alpha: float) -> bool:
    """Whether a screened factor goes on to the focus stage: p below ``alpha``, or on exact
    data (no test) an effect beyond rounding."""
    if effect.get("exact"):
        return effect["effect"] != 0.0
    return effect["p"] is not None and effect["p"] < alpha
