"""Replay the gate of this checkout on comparisons measured earlier (``compare_verdicts.py``
JSON lines): what would today's test have said on exactly those runs?

    .venv/bin/python bench/compare_replay.py docs/compare/aa_htex.jsonl [--unpaired]

Each stored comparison keeps both sides' values in run order, and the ABBA order is fixed,
so feeding them back in the same order reproduces the same interleaving. The replay is exact
as long as the gate stops no later than the stored run did. When it would have wanted more
runs than were measured (the old gate stopped early), the row says "needs more runs" and is
not counted as any verdict.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from perflab.compare.stats import HIGHER_IS_BETTER, sequential


class Exhausted(Exception):
    pass


def feed(values: list[float]) -> Callable[[], float]:
    it: Iterator[float] = iter(values)

    def nxt() -> float:
        try:
            return next(it)
        except StopIteration:
            raise Exhausted from None

    return nxt


def replay(row: dict[str, Any], paired: bool) -> tuple[str, dict[str, Any]]:
    a, b = row["a"]["values"], row["b"]["values"]
    try:
        dec, _, _ = sequential(
            feed(a),
            feed(b),
            row["n_min"],
            row["n_max"],
            threshold=(row["decision"] or {}).get("threshold", 0.05),
            alpha=row["alpha"],
            higher_is_better=row["metric"] in HIGHER_IS_BETTER,
            paired=paired,
        )
    except Exhausted:
        return "needs more runs", {}
    return dec.verdict, dec.to_dict()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("files", nargs="+", type=Path)
    ap.add_argument("--unpaired", action="store_true", help="replay the Welch test instead")
    ns = ap.parse_args()
    for path in ns.files:
        rows = [json.loads(x) for x in path.read_text().splitlines() if x.strip()]
        tally: dict[str, int] = {}
        print(f"{path}: {len(rows)} comparisons ({'Welch' if ns.unpaired else 'paired'})")
        print(f"{'#':>3} {'stored':<13} {'replayed':<16} {'B/A':>6} {'CI':>13} {'p':>8} {'n':>3}")
        for i, row in enumerate(rows, 1):
            verdict, d = replay(row, not ns.unpaired)
            tally[verdict] = tally.get(verdict, 0) + 1
            ci = f"{d['ci_low']:.3f}-{d['ci_high']:.3f}" if d else ""
            print(
                f"{i:>3} {row['verdict']:<13} {verdict:<16} {d.get('ratio', float('nan')):6.3f} "
                f"{ci:>13} {d.get('p_value', float('nan')):8.2g} {d.get('n_a', '')!s:>3}"
            )
        print("replayed:", ", ".join(f"{k} {v}" for k, v in sorted(tally.items())), "\n")


if __name__ == "__main__":
    main()
