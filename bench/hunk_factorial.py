"""bisect --explain's hunk groups measured together (a factorial) against one at a time, on
simulated runs: interval widths at the same most runs, and coverage of a planted truth.

    .venv/bin/python bench/hunk_factorial.py               # 200 seeds, sd 0.02
    .venv/bin/python bench/hunk_factorial.py --seeds 50 --sd 0.05

Each run's log is the cell's true log cost plus normal noise (sd ``--sd``). One at a time:
each group's revert paired against the culprit, ``--runs`` runs a side (the most the gate
makes), its t interval at alpha / groups. Together: ``bisect/factorial.py``'s cells with as
many runs in all (2 · groups · runs), intervals at alpha over the shares and interactions.
The table gives the median half-width (log scale) of a group's reverted-alone effect (what
both measure), of its share (together only) and of an interaction (together only). Then a
planted truth, two groups that cost nothing alone and +20 % together (the other groups
null): how often each interval covers its truth, and how often the interaction's excludes
0. Last, the looks (``factorial.sequential``): the replicates stop once every group's share is
decided or negligible; per number of groups, with no effect anywhere (A/A) and with group 0
the whole step (+20 %), how often any stated interval (shares, interactions) excludes 0
falsely or misses its truth, and the replicates run against the most (the fixed n). No
wall-clock time is involved: the figures are the same on any machine.
"""

from __future__ import annotations

import argparse
import math

import numpy as np

from perflab.analysis.stats import bonferroni_level, paired_t
from perflab.bisect import factorial as fx


def truth(cell: list[int], planted: bool) -> float:
    """Log cost of a cell (1 = reverted): +20 % only when groups 0 and 1 are both applied."""
    return math.log(1.2) if planted and not cell[0] and not cell[1] else 0.0


def together(k: int, runs: int, sd: float, rng: np.random.Generator, planted: bool) -> dict:
    d = fx.design(k)
    assert d is not None
    reps = fx.replicates(k, len(d), runs)
    rows = [(r, [int(x) for x in c], math.exp(truth([int(x) for x in c], planted)
                                             + rng.normal(0, sd)))
            for r in range(reps) for c in d]  # fmt: skip
    return fx.fit(rows, k, math.log(1.2), 0.05) | {"runs": len(rows)}


def alone(k: int, runs: int, sd: float, rng: np.random.Generator) -> float:
    """Half-width of one group's paired revert interval at alpha / k (log scale)."""
    diff = rng.normal(0, sd, runs) - rng.normal(0, sd, runs)
    _, lo, hi = paired_t(diff, 1 - bonferroni_level(0.05, k))
    return (hi - lo) / 2


def half(e: dict) -> float:
    return (e["high"] - e["low"]) / 2


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=200)
    ap.add_argument("--sd", type=float, default=0.02)
    ap.add_argument("--runs", type=int, default=10, help="most runs a side, one at a time")
    a = ap.parse_args()
    rng = np.random.default_rng(1)
    print(f"sd {a.sd} of a run's log, --runs {a.runs}, {a.seeds} seeds; median half-widths")
    print(
        "| groups | runs (both) | one at a time: reverted | together: reverted | share "
        "| interaction |"
    )
    print("|---|---|---|---|---|---|")
    for k in (1, 2, 4, 6, 8):
        fits = [together(k, a.runs, a.sd, rng, False) for _ in range(a.seeds)]
        one = [alone(k, a.runs, a.sd, rng) for _ in range(a.seeds)]
        rev = [half(f["groups"][0]["revert"]) for f in fits]
        share = [half(f["groups"][0]["share"]) for f in fits]
        inter = [half(f["interactions"][0]["effect"]) for f in fits] if k > 1 else [math.nan]
        print(
            f"| {k} | {2 * k * a.runs} / {fits[0]['runs']} | {np.median(one):.4f} | "
            f"{np.median(rev):.4f} | {np.median(share):.4f} | {np.median(inter):.4f} |"
        )
    print("\nplanted: groups 0 and 1 cost nothing alone, +20 % together")
    for k in (2, 4, 6):
        fits = [together(k, a.runs, a.sd, rng, True) for _ in range(a.seeds)]
        whole = math.log(1.2)
        checks = {
            "interaction covers log 1.2": [_in(f["interactions"][0]["effect"], whole)
                                           for f in fits],
            "interaction excludes 0": [f["interactions"][0]["effect"]["low"] > 0 for f in fits],
            "alone covers 0 (both)": [all(_in(f["groups"][g]["alone"], 0.0) for g in (0, 1))
                                      for f in fits],
            "share covers half (both)": [all(_in(f["groups"][g]["share"], whole / 2)
                                             for g in (0, 1)) for f in fits],
            "other interactions cover 0": [all(_in(i["effect"], 0.0)
                                               for i in f["interactions"][1:]) for f in fits],
        }  # fmt: skip
        level = fits[0]["level"]
        said = ", ".join(f"{name} {np.mean(v):.1%}" for name, v in checks.items())
        print(f"  {k} groups (each interval at level {level:.3g}): {said}")
    looks_table(a.seeds, a.runs, a.sd)


def looks(k: int, runs: int, sd: float, seed: int, planted: bool) -> dict:
    """One sequential factorial: no effect, or group 0 the whole step (+20 %) alone."""
    d = fx.design(k)
    assert d is not None
    rng = np.random.default_rng(seed)
    cost = math.log(1.2) if planted else 0.0

    def block(r: int) -> list[fx.Row]:
        return [(r, [int(x) for x in c], math.exp((0.0 if c[0] else cost) + rng.normal(0, sd)))
                for c in d]  # fmt: skip

    return fx.sequential(block, k, math.log(1.2), 0.05, 0.05, fx.replicates(k, len(d), runs))


def looks_table(seeds: int, runs: int, sd: float) -> None:
    print("\nlooks: stop once every group's share is decided or negligible (±5 %), α 0.05")
    print(
        "| groups | truth | most replicates | replicates run (mean) | stopped early | "
        "a null term shown | an interval missing its truth |"
    )
    print("|---|---|---|---|---|---|---|")
    for k in (2, 3, 4, 6):
        for planted in (False, True):
            got = [looks(k, runs, sd, 1000 + s, planted) for s in range(seeds)]
            truth = _truths([math.log(1.2) if planted and i == 0 else 0.0 for i in range(k)])
            pairs = [list(zip(_stated(g["fit"]), truth, strict=True)) for g in got]
            false = [any(_excl(e) for e, x in p if x == 0.0) for p in pairs]
            miss = [any(not _in(e, x) for e, x in p) for p in pairs]
            used = [g["replicates"] for g in got]
            early = np.mean([n < g["most"] for n, g in zip(used, got, strict=True)])
            print(
                f"| {k} | {'group 0 +20 %' if planted else 'A/A'} | {got[0]['most']} | "
                f"{np.mean(used):.2f} | {early:.0%} | "
                f"{np.mean(false):.1%} | {np.mean(miss):.1%} |"
            )


def _stated(est: dict) -> list[dict]:
    """The shares then the interactions of a fit."""
    return [g["share"] for g in est["groups"]] + [i["effect"] for i in est["interactions"]]


def _truths(shares: list[float]) -> list[float]:
    """The true shares (log scale), then the interactions' (none planted)."""
    k = len(shares)
    return [*shares, *([0.0] * (k * (k - 1) // 2))]


def _excl(e: dict) -> bool:
    return bool(e["low"] > 0 or e["high"] < 0)


def _in(e: dict, x: float) -> bool:
    return bool(e["low"] <= x <= e["high"])


if __name__ == "__main__":
    main()
