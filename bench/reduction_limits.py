"""What keeps a seed of bench/best_set.py unclean, measured look by look (issue 44).

Runs perflab's tpe+confirm tune on a synthetic truth (perflab.tune.truths), seed by seed, on
best_set.py's path (the same seeds, campaign clock and budget), and for every member of the
search's pick that the recommended set gets wrong (a truly needed member, dropping it alone
costs more than 2 %, left out; or a member that does nothing or harms, recommended) prints
each look that tested it: the look's level and the number of groups it shares it with, the
verdict, the ratio with its interval, its standard error, how far the estimate lies from the
true cost in standard errors, the runs near the set (and how many dropped it), and, for a
needed member, the power the look had at its true cost and the runs near the set a look at
that level would need for 90 % power (se shrinking as 1/sqrt(runs)). Also the recommended
set's true time over the optimum, and the search's pick's.

    PYTHONPATH=src python bench/reduction_limits.py --truth multiplicative --seeds 8,9,13,16
"""

from __future__ import annotations

import argparse
import math
from typing import Any

import numpy as np

from perflab.analysis.stats import norm_cdf, z_quantile
from perflab.tune import knockout
from perflab.tune import reduce as reduction
from perflab.tune.optuna_search import OptunaSearch
from perflab.tune.truths import TRUTHS, Truth


def _cost(tr: Truth, chosen: list[str], f: str) -> float:
    """The true time of ``chosen`` without ``f`` over its time with it."""
    t = tr.time(tr.matrix([chosen]))[0]
    return float(tr.time(tr.matrix([[g for g in chosen if g != f]]))[0] / t)


def _line(row: dict[str, Any], true: float) -> str:
    """One look at a watched member: its evidence against the truth."""
    lo, hi, conf = row["ci_low"], row["ci_high"], row["confidence"]
    q = z_quantile(conf)
    se = (math.log(hi) - math.log(lo)) / (2 * q)
    z = (math.log(row["ratio"]) - math.log(true)) / se
    out = (
        f"    look at {row['alpha']:.4f}/{row['groups']} groups: {row['verdict']} "
        f"{row['ratio']:.3f}x ({conf:.1%} CI {lo:.3f}-{hi:.3f}), se {se:.4f}, {z:+.1f} se from "
        f"the truth, {row['runs']} runs near the set ({row['dropping']} dropping it)"
    )
    if true > 1.02:
        crit = z_quantile(1 - 2 * row["alpha"] / row["groups"])
        power = norm_cdf(math.log(true) / se - crit)
        need = row["runs"] * (se * (crit + z_quantile(0.8)) / math.log(true)) ** 2
        out += f"; power at the truth {power:.2f}, {need:.0f} runs near the set for 0.90"
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--truth", default="multiplicative")
    ap.add_argument("--seeds", default="8,9,13,16", help="comma-separated seeds")
    ap.add_argument("--per-candidate", type=int, default=15)
    args = ap.parse_args()
    tr = TRUTHS[args.truth]
    opt = tr.optimum()
    rows: list[dict[str, Any]] = []
    look, tests = reduction.look, knockout.ordered_tests
    last: dict[str, Any] = {}

    def tests_at(p: list[float], *a: Any) -> Any:
        last["m"] = int(np.isfinite(p).sum())  # the groups the look's level is shared over
        return tests(p, *a)

    def look_at(*a: Any, **k: Any) -> Any:
        best, groups, fixed, seen, start, alpha, reach = a[0], a[1], a[2], a[3], a[6], a[9], a[11]
        ev = look(*a, **k)
        loc = knockout.local_rows(seen, best, [*fixed, *groups], start, reach=reach)
        for j, e in enumerate(ev):
            if e.ratio is not None and e.ci_low and e.ci_high and e.confidence:
                n_drop = int(loc.groups[:, len(fixed) + j].sum()) if len(loc.y) else 0
                rows.append(
                    {**e.to_dict(), "alpha": alpha, "groups": last.get("m", 1), "dropping": n_drop}
                )
        return ev

    knockout.ordered_tests, reduction.look = tests_at, look_at
    for seed in (int(s) for s in args.seeds.split(",")):
        rows.clear()
        run = tr.campaign(np.random.default_rng(10_000 + seed))
        res = OptunaSearch(
            tr.factors, tr.cons, args.per_candidate * len(tr.factors), seed=seed
        ).run(lambda sets, stage, reason, run=run: list(run(sets)))
        pick = sorted(res.searched)
        got = tr.time(tr.matrix([res.best]))[0] / opt
        print(
            f"seed {seed}: recommended {sorted(res.best)} {got:.3f}x the optimum (search's pick "
            f"{tr.time(tr.matrix([pick]))[0] / opt:.3f}x); runs: "
            + ", ".join(f"{s.name} {s.runs}" for s in res.stages if not s.name.startswith("search"))
        )
        wrong = tr.unneeded(res.best)
        for f in pick:
            true = _cost(tr, pick, f)
            if (true > 1.02 and f not in res.best) or f in wrong:
                said = "recommended" if f in res.best else "left out"
                print(f"  {f}: true cost {true:.3f}x, {said}")
                for row in rows:
                    if f in row["factors"]:
                        print(_line(row, true))


if __name__ == "__main__":
    main()
