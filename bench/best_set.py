"""How often does each search find a set whose TRUE time is within 5% of the optimum, and
how often is that set also clean (no member that does nothing or harms)?

Synthetic truths (perflab.tune.truths: perflab's generator, either-or pairs with a
state-dependent factor that hurts near the optimum, a multiplicative truth, a sparse truth
with six null and two harmful factors; a helpful factor worth 7% among ten do-nothing ones
(grouped), the same with slow drift (+6% per 100 runs), and with drift and 1% of runs at 2x
(outliers); 17–20 candidates with a 4-level factor; 3–5% noise and rare outliers), SEEDS
seeds, budgets 100 and 300:

* staged: perflab's tuner (screen → focus → confirm), the set it confirms;
* random: one-shot random valid sets, a model fitted, its predicted best;
* doptimal: one-shot D-optimal main-effects design, the same fit;
* optuna: TPE over one categorical per factor, the best trial observed;
* tpe+confirm: perflab's optuna search (TPE, finalists re-measured, confirmation pairs).

For staged and tpe+confirm (which reduce their pick to what the data support), "clean" is
the share of seeds within 5% AND with no member whose removal would not slow the set down.
Also the share of seeds whose measured speed-up interval covers the true speed-up, and for
tpe+confirm the share of nice levels whose set is within 5% of the level's true optimum.

    python bench/best_set.py --seeds 20
    python bench/best_set.py --seeds 20 --budgets 15c,100 --only tpe+confirm  # 15 per candidate
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
import statsmodels.api as sm

from perflab.campaign.designs.fractional import doptimal
from perflab.tune.final import repair
from perflab.tune.optuna_search import OptunaSearch
from perflab.tune.stages import Tuner
from perflab.tune.truths import TRUTHS, Truth


def model_pick(tr: Truth, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Fit main effects on log time and return the valid row it predicts fastest."""
    m = sm.add_constant(x, has_constant="add")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        beta = sm.OLS(np.log(y), m).fit(method="pinv").params
    grid = tr.all_valid()
    pred = beta[0] + grid @ beta[1:]
    return grid[int(np.argmin(pred))]


def one_shot(tr: Truth, budget: int, seed: int, kind: str) -> np.ndarray:
    rng = np.random.default_rng(seed)
    cons, k = tr.cons, len(tr.factors)
    if kind == "random":
        raw = rng.random((budget, k)) < 0.5
    else:
        raw = doptimal(k, budget, interactions=False, rng=rng) > 0
    sets = [
        sorted(repair({f for f, v in zip(tr.factors, r, strict=True) if v}, cons, rng)) for r in raw
    ]
    x = tr.matrix(sets)
    return model_pick(tr, x, tr.measure(sets, rng))


def optuna_pick(tr: Truth, budget: int, seed: int) -> np.ndarray:
    import optuna

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    rng = np.random.default_rng(seed)
    plain = [f for f in tr.factors if "=" not in f]
    levels = ["0", *(f.partition("=")[2] for f in tr.factors if "=" in f)]

    def chosen(params: dict[str, str]) -> list[str]:
        s = [f for f in plain if params[f] == "1"]
        return s + ([f"L={params['L']}"] if params["L"] != "0" else [])

    def objective(trial: optuna.Trial) -> float:
        params = {f: trial.suggest_categorical(f, ["0", "1"]) for f in plain}
        params["L"] = trial.suggest_categorical("L", levels)
        return float(tr.measure([chosen(params)], rng)[0])

    study = optuna.create_study(sampler=optuna.samplers.TPESampler(seed=seed))
    study.optimize(objective, n_trials=budget)
    return tr.matrix([chosen(study.best_params)])[0]


#: Per (method, truth, budget): recommended members kept on a group's evidence, members of
#: the recommended set, members listed as not shown needed, seeds whose search's pick and
#: whose fastest set (what the reduction kept) are within 5%, and the runs per stage
#: (summed over the seeds).
TALLY: dict[tuple[str, str, int], list] = {}
OPTIMA: dict[str, float] = {}


def tuned(
    tr: Truth, budget: int, seed: int, search: type = Tuner
) -> tuple[np.ndarray, bool, bool, float]:
    """The search's recommendation: its row, whether the measured interval covers the true
    speed-up, whether it is clean, and the share of levels within 5% of their optimum.
    The truth is measured with its campaign clock (drift) in the order the search runs."""
    run = tr.campaign(np.random.default_rng(10_000 + seed))
    res = search(tr.factors, tr.cons, budget, seed=seed).run(
        lambda sets, stage, reason: list(run(sets))
    )
    # a recommended member whose only evidence is a group's (issue 44): must be 0
    own = {
        e.factors[0]
        for e in res.evidence
        if len(e.factors) == 1 and e.verdict in ("slower", "either")
    }
    added = {f for lv in res.levels for e in lv.get("added", []) for f in e["factors"]}
    on_group = [f for f in res.best if f not in own | added]
    tally = TALLY.setdefault((search.name, tr.name, budget), [0, 0, 0, 0, 0, {}])
    tally[0] += len(on_group)
    tally[1] += len(res.best)
    tally[2] += len(set(res.fastest) - set(res.best))
    if tr.name not in OPTIMA:
        OPTIMA[tr.name] = tr.optimum()
    opt = OPTIMA[tr.name]
    for j, chosen in ((3, res.searched), (4, res.fastest)):
        tally[j] += bool(tr.time(tr.matrix([chosen]))[0] <= 1.05 * opt)
    for st in res.stages:
        kind = st.name.split()[0]  # "search 1", "search 2", ...: one search
        tally[5][kind] = tally[5].get(kind, 0) + st.runs
    if res.speedup is None:
        return tr.matrix([res.best])[0], False, not tr.unneeded(res.best), 0.0
    x = tr.matrix([res.best])
    true_speedup = float(tr.time(tr.matrix([[]]))[0] / tr.time(x)[0])
    covered = res.speedup.ci_low <= true_speedup <= res.speedup.ci_high
    levels = [
        tr.time(tr.matrix([lv["set"]]))[0] <= 1.05 * tr.optimum(lv["level"]) for lv in res.levels
    ]
    return x[0], covered, not tr.unneeded(res.best), float(np.mean(levels))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--seeds", type=int, default=20)
    ap.add_argument("--seed0", type=int, default=0, help="first seed (to split a run)")
    ap.add_argument(
        "--budgets", default="100,300", help="runs, or runs per candidate with a c (15c)"
    )
    ap.add_argument("--no-optuna", action="store_true")
    ap.add_argument("--only", default="", help="comma-separated methods to run")
    ap.add_argument("--truths", default=",".join(TRUTHS))
    args = ap.parse_args()
    methods = ["staged", "random", "doptimal"]
    methods += [] if args.no_optuna else ["optuna", "tpe+confirm"]
    methods = [m for m in methods if not args.only or m in args.only.split(",")]
    print(f"share of {args.seeds} seeds within 5% of the true optimum")
    head = " ".join(f"{m:>11s}" for m in methods)
    print(
        f"{'truth':15s} {'budget':>6s} {head}   clean: staged tpe+conf  "
        "coverage: staged tpe+conf  levels: tpe+conf"
    )
    for name in args.truths.split(","):
        tr = TRUTHS[name]
        opt = tr.optimum()
        for word in args.budgets.split(","):
            budget = int(word[:-1]) * len(tr.factors) if word.endswith("c") else int(word)
            t0 = time.perf_counter()
            hits = dict.fromkeys(methods, 0)
            clean = dict.fromkeys(methods, 0)
            covered = dict.fromkeys(methods, 0)
            levels: list[float] = []
            for seed in range(args.seed0, args.seed0 + args.seeds):
                for m in methods:
                    if m in ("staged", "tpe+confirm"):
                        x, cov, ok, lv = tuned(
                            tr, budget, seed, Tuner if m == "staged" else OptunaSearch
                        )
                        covered[m] += cov
                        if m == "tpe+confirm":
                            levels.append(lv)
                    elif m == "optuna":
                        x, ok = optuna_pick(tr, budget, seed), False
                    else:
                        x, ok = one_shot(tr, budget, seed, m), False
                    within = tr.time(x[None, :])[0] <= 1.05 * opt
                    hits[m] += within
                    clean[m] += within and ok
            row = " ".join(f"{hits[m] / args.seeds:11.2f}" for m in methods)
            both = "  ".join(
                f"{clean[m] / args.seeds:6.2f}" if m in clean else "     -"
                for m in ("staged", "tpe+confirm")
            )
            cov = "  ".join(
                f"{covered[m] / args.seeds:6.2f}" if m in covered else "     -"
                for m in ("staged", "tpe+confirm")
            )
            lv_share = f"{np.mean(levels):6.2f}" if levels else "     -"
            print(
                f"{name:15s} {budget:6d} {row}   {both}   {cov}   {lv_share}"
                f"   ({time.perf_counter() - t0:.0f} s)",
                flush=True,
            )
            for (m, tname, b), (grp, size, unres, pick, fast, runs) in TALLY.items():
                if (tname, b) == (name, budget):
                    spent = ", ".join(f"{k} {v / args.seeds:.1f}" for k, v in runs.items())
                    print(
                        f"  {m}: recommended members kept on group evidence {grp}; "
                        f"mean recommended size {size / args.seeds:.1f}, "
                        f"not shown needed beside it {unres / args.seeds:.1f}; within 5%: "
                        f"search's pick {pick / args.seeds:.2f}, fastest set "
                        f"{fast / args.seeds:.2f}; mean runs: {spent}",
                        flush=True,
                    )


if __name__ == "__main__":
    main()
