"""How much power has tune at the small budgets a user's own program affords (issue 38)?

A user's program is slow (a 1,000-task Parsl or Dask workflow: 20-80 s a run) and noisy on
a shared machine, so a tune gets 40-50 runs, not the 300 of bench/best_set.py. This bench
models the two programs of docs/user-programs.md as synthetic truths (perflab.tune.truths'
``Truth``: multiplicative log-normal noise, 1% outliers) with the noise those runs showed,
and runs each search over the same seeds at the budgets used there and larger:

* ``dask_user``: 10 candidates, one (``dask_threads``) worth 0.33x, nine that do nothing;
  log-sd 0.24 (the untreated Dask program: 66.1 s, 95% CI 48.5-88.0 from 5 runs).
* ``parsl_user``: 11 candidates, three helpful (0.90x, 0.93x, 0.95x), one harmful (1.08x),
  seven that do nothing; log-sd 0.12 (the untreated Parsl program: 78.4 s, 69.8-94.1).
  The effects are assumed (the real screen could not resolve them): a model, not a finding.

Per truth, budget and search, over SEEDS seeds (95% Clopper-Pearson intervals):

* screen: the share of seeds whose screen keeps the strongest factor in play (estimate < 0
  and p < 0.25, the staged search's own rule, ``Tuner.choose_active``); staged only;
* screen_ols: the same rule on the same screen runs with the classic OLS error instead of
  the screen's HC3 (a counterfactual: what the runs say under the textbook test);
* picked: the share whose search picked the strongest factor (the set the reduction kept:
  the recommended set and the members the budget could not test, ``TuneResult.fastest``);
* found: the share whose recommended set holds it (shown needed by its own knock-out);
* within 5%: the share whose recommended set's true time is within 5% of the optimum;
* clean: ... and with no member that does nothing or harms;
* runs: the runs the tune spent on average (of the budget).

    PYTHONPATH=src python bench/tune_user_power.py --seeds 40 --budgets 42,48,60,100,200
    PYTHONPATH=src python bench/tune_user_power.py --noise 0.04 ...   # a quiet machine's noise
"""

from __future__ import annotations

import argparse
import time
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from perflab.analysis.stats import clopper_pearson
from perflab.factors.catalog import load_catalogs
from perflab.tune.optuna_search import OptunaSearch
from perflab.tune.stages import Tuner
from perflab.tune.truths import Truth

DASK = {"dask_threads": 0.33}
DASK_NULL = [
    "dask_no_work_stealing", "dask_compression=zlib", "dask_tick=100", "dask_heartbeat_30s",
    "dask_log_error", "dask_no_spill", "dask_no_pause", "sched_batch", "startup_safe_path",
]  # fmt: skip
PARSL = {
    "cfg_noop_logging": 0.90,
    "cfg_poll_100": 0.93,
    "src_interchange_longer_poll": 0.95,
    "cfg_2_blocks": 1.08,
}
PARSL_NULL = [
    "cfg_prefetch=10", "cfg_4_workers", "src_submit_biglogs_remove", "src_pool_logs_remove",
    "startup_safe_path", "sched_batch", "cfg_rundir_ramfs",
]  # fmt: skip


def program(name: str, effects: dict[str, float], nulls: list[str], noise: float) -> Truth:
    """A truth over the program's candidates: each factor multiplies the time by its effect."""
    factors = [*effects, *nulls]
    catalog = load_catalogs()
    categories = {f: catalog.get(f.partition("=")[0]).category for f in factors}
    weights = np.array([effects.get(f, 1.0) for f in factors])

    def t(x: np.ndarray) -> np.ndarray:
        return 60.0 * np.prod(weights**x, axis=1)

    return Truth(name, factors, t, categories, noise=noise)


TRUTHS: dict[str, Callable[[], Truth]] = {
    "dask_user": lambda: program("dask_user", DASK, DASK_NULL, 0.24),
    "parsl_user": lambda: program("parsl_user", PARSL, PARSL_NULL, 0.12),
}
SEARCHES = {"staged": Tuner, "tpe+confirm": OptunaSearch}


def one(tr: Truth, strongest: str, budget: int, seed: int, search: type) -> dict[str, Any]:
    """One tune of ``tr`` at ``budget``: what its screen kept and what it recommended."""
    run = tr.campaign(np.random.default_rng(10_000 + seed))
    s = search(tr.factors, tr.cons, budget, seed=seed, confirm_pairs=3)
    res = s.run(lambda sets, stage, reason: list(run(sets)))
    screen = {e["name"]: e for e in res.screen}
    e = screen.get(strongest)
    within = tr.time(tr.matrix([res.best]))[0] <= 1.05 * tr.optimum()
    first = res.stages[0].runs if res.stages else 0
    return {
        "screen": bool(e and e["estimate"] < 0 and e["p"] < 0.25),
        "screen_ols": _classic_p(s.obs[:first], tr.factors, strongest) < 0.25,
        "picked": strongest in (res.fastest or res.best),
        "found": strongest in res.best,
        "within": bool(within),
        "clean": bool(within) and not tr.unneeded(res.best),
        "spent": res.runs,
    }


def _classic_p(obs: list, factors: list[str], f: str) -> float:
    """The one-sided p of ``f`` helping in the screen's runs with the classic OLS error (the
    screen uses HC3, whose leverage correction at 3 residual degrees of freedom is huge):
    what the same runs say under the textbook test."""
    import statsmodels.api as sm

    x = np.array([[float(g in s) for g in factors] for s, _ in obs])
    keep = [j for j in range(x.shape[1]) if 0 < x[:, j].sum() < len(x)]
    if factors.index(f) not in keep or len(obs) <= len(keep) + 1:
        return 1.0
    fit = sm.OLS(np.log([y for _, y in obs]), sm.add_constant(x[:, keep])).fit()
    i = keep.index(factors.index(f)) + 1
    return float(fit.pvalues[i]) if fit.params[i] < 0 else 1.0


def share(k: int, n: int) -> str:
    low, high = clopper_pearson(k, n)
    return f"{k / n:4.2f} ({low:.2f}-{high:.2f})"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--seeds", type=int, default=20)
    ap.add_argument("--budgets", default="42,100,200")
    ap.add_argument("--truths", default=",".join(TRUTHS))
    ap.add_argument("--only", default=",".join(SEARCHES), help="searches, comma-separated")
    ap.add_argument("--noise", type=float, help="log-sd instead of the program's (e.g. 0.04)")
    args = ap.parse_args()
    warnings.simplefilter("ignore")  # rank-deficient screens at the least budgets: expected
    cols = ("screen", "screen_ols", "picked", "found", "within", "clean")
    print(f"{args.seeds} seeds; shares with 95% Clopper-Pearson intervals")
    print(f"{'truth':11s} {'budget':>6s} {'search':12s} " + " ".join(f"{c:>16s}" for c in cols))
    for name in args.truths.split(","):
        tr = TRUTHS[name]()
        tr.noise = args.noise if args.noise is not None else tr.noise
        print(f"{name}: noise (log-sd) {tr.noise}", flush=True)
        strongest = min(DASK | PARSL, key=lambda f: (DASK | PARSL)[f] if f in tr.factors else 9)
        for budget in map(int, args.budgets.split(",")):
            for label in args.only.split(","):
                t0 = time.perf_counter()
                got = [one(tr, strongest, budget, s, SEARCHES[label]) for s in range(args.seeds)]
                row = [
                    share(sum(g[c] for g in got), len(got))
                    if not c.startswith("screen") or label == "staged"
                    else "-"
                    for c in cols
                ]
                print(
                    f"{name:11s} {budget:6d} {label:12s} "
                    + " ".join(f"{r:>16s}" for r in row)
                    + f"  runs {np.mean([g['spent'] for g in got]):5.1f}"
                    + f"   ({time.perf_counter() - t0:.0f} s)",
                    flush=True,
                )


if __name__ == "__main__":
    main()
