"""The reduction's family-wise error on a null truth with an either-or pair (issue 44).

The set {e, r, n00..n0K} on the eitheror truth (perflab.tune.truths): e and r each save 20 %,
together no more than one; the nulls do nothing. After 30 search-like runs (each member in
with probability 0.7), the reduction with 40 knock-out runs. A false "needed" is a null
member in the recommended set (shown needed by a look, or as an either-or member). Prints,
over the seeds, the share with a false "needed" and its 95 % Clopper-Pearson interval, the
largest sum of the levels the looks and the pairs used (at most 5 %: tune/spending.py), and
how often one of e and r (the right answer) is recommended.

    PYTHONPATH=src python bench/reduction_null.py --seeds 200
    PYTHONPATH=src python bench/reduction_null.py --seeds 200 --spare 20  # the final blocks' spare
"""

from __future__ import annotations

import argparse
from typing import Any

import numpy as np

from perflab.analysis.stats import clopper_pearson
from perflab.tune import reduce as reduction
from perflab.tune.spending import PAIR_ALPHA
from perflab.tune.truths import TRUTHS


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--seeds", type=int, default=200)
    ap.add_argument("--nulls", type=int, default=3)
    ap.add_argument(
        "--spare", type=int, default=0, help="runs beyond the 40 a split or retry look may take"
    )
    ap.add_argument("--no-pair", action="store_true", help="x0 (20 %%) in place of e and r")
    args = ap.parse_args()
    tr = TRUTHS["eitheror"]
    nulls = [f"n{j:02d}" for j in range(args.nulls)]
    chosen = [*(["x0"] if args.no_pair else ["e", "r"]), *nulls]
    levels: list[float] = []
    look, pairs, alone = reduction.look, reduction.both_kinds, reduction.alone

    def look_at(*a: Any, **k: Any) -> Any:
        levels.append(a[9])  # the look's level (tune/knockout.py ``look``)
        return look(*a, **k)

    def pairs_at(*a: Any, **k: Any) -> Any:
        levels.append(k.get("alpha", PAIR_ALPHA))
        return pairs(*a, **k)

    def alone_at(*a: Any, **k: Any) -> Any:
        levels.append(a[6])  # the alone test's level (tune/alone.py, the unused split share)
        return alone(*a, **k)

    reduction.look, reduction.both_kinds, reduction.alone = look_at, pairs_at, alone_at
    false = one = 0
    most = 0.0
    how: dict[str, int] = {}
    for seed in range(args.seeds):
        levels.clear()
        rng = np.random.default_rng(seed)

        def measure(sets: list, rng: np.random.Generator = rng) -> list[float]:
            return list(tr.measure([sorted(s) for s in sets], rng))

        sets = [sorted(f for f in chosen if rng.random() < 0.7) for _ in range(30)]
        obs = [(frozenset(s), float(y)) for s, y in zip(sets, tr.measure(sets, rng), strict=True)]
        kept, ev = reduction.reduce(
            set(chosen),
            obs,
            tr.cons,
            measure,
            40,
            np.random.default_rng(seed + 1),
            args.spare,
        )
        needed = reduction.shown_needed(kept, ev, tr.cons)
        false += bool(needed & set(nulls))
        for e in ev:  # how each false "needed" was shown: by a look, or as either-or
            if set(e.factors) & needed & set(nulls) and len(e.factors) == 1:
                how[e.verdict] = how.get(e.verdict, 0) + 1
        one += len(needed & {"e", "r"}) == 1
        most = max(most, sum(levels))
    lo, hi = clopper_pearson(false, args.seeds)
    print(
        f"{args.seeds} seeds, {{{', '.join(chosen)}}}: a null shown needed in {false} "
        f"({false / args.seeds:.3f}, 95% CI {lo:.3f}-{hi:.3f}); the levels used add up to at "
        f"most {most:.4f}; exactly one of e and r recommended in {one / args.seeds:.2f}; the false "
        f"members' verdicts: {how}"
    )


if __name__ == "__main__":
    main()
