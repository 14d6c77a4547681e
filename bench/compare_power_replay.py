"""How often would the gate flag a change of exactly ``--effect`` on the noise of comparisons
measured here? (A replay on real noise, labelled as such: not a measurement of that effect.)

    .venv/bin/python bench/compare_power_replay.py docs/compare/inject300_paired_htex.jsonl \
        --effect 0.10 --runs 40

Each stored comparison's runs are put back in their time (ABBA) order and its B runs are
divided by its own B/A (the geometric mean of its pairs), so the sequence is A/A-like noise
with the machine's drift as it happened. The gate is then replayed on windows of it
(``perflab.compare.calibrate.simulate``): the A/A windows give its false-alarm rate, the
same windows with B made ``--effect`` worse its detection rate, each with an exact 95 % CI.
Removing each comparison's own mean takes a share 1/n of its noise with it, so both rates
err slightly in the gate's favour for short comparisons.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from perflab.analysis.stats import clopper_pearson
from perflab.compare.calibrate import simulate
from perflab.compare.stats import HIGHER_IS_BETTER, abba


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("file", type=Path, help="compare_verdicts.py JSON lines")
    ap.add_argument("--effect", type=float, default=0.10)
    ap.add_argument("--runs", type=int, default=40, help="most runs per side")
    ap.add_argument("--min-runs", type=int, default=4)
    ap.add_argument("--simulations", type=int, default=400)
    ns = ap.parse_args()
    rows = [json.loads(x) for x in ns.file.read_text().splitlines() if x.strip()]
    seq: list[float] = []
    effects = []
    for r in rows:
        a, b = r["a"]["values"], r["b"]["values"]
        own = float(np.exp(np.mean(np.log(b) - np.log(a[: len(b)]))))
        effects.append(own)
        sides = {"A": list(a), "B": [x / own for x in b]}
        for label in abba(len(sides["A"])):
            if sides[label]:
                seq.append(sides[label].pop(0))
    hib = rows[0]["metric"] in HIGHER_IS_BETTER
    counts, detected = simulate(
        seq, ns.min_runs, ns.runs, 0.05, rows[0]["alpha"], ns.effect, hib, ns.simulations
    )
    false = counts.get("faster", 0) + counts.get("slower", 0)
    sims = ns.simulations
    fa_lo, fa_hi = clopper_pearson(false, sims)
    de_lo, de_hi = clopper_pearson(detected, sims)
    print(
        f"{len(rows)} comparisons, {len(seq)} runs; their own B/A removed "
        f"({min(effects):.3f}-{max(effects):.3f})"
    )
    print(f"A/A windows: {false}/{sims} different ({fa_lo:.1%}-{fa_hi:.1%}); verdicts {counts}")
    print(
        f"+{ns.effect:.0%} at most {ns.runs} runs per side: detected {detected}/{sims} "
        f"= {detected / sims:.1%} (95 % CI {de_lo:.1%}-{de_hi:.1%})"
    )


if __name__ == "__main__":
    main()
