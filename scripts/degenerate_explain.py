"""The explain column of docs/degenerate.md (issue 43): two local releases of a toy package
(tests/explain/toyrelease.py: 1.0 -> 2.0, a costly hunk and a costly default) and a score
script whose value is the release's *simulated* time, so every case is cheap and, but for
``noisy``, exact.

    python scripts/degenerate_explain.py DIR   # writes DIR/wheels and DIR/score.py

The score: ``time.sleep`` counts instead of sleeping; one ``Worker().run()`` is 100000 µs in
1.0, 200000 in 2.0, 140000 with 2.0's hunk reverted, 160000 with its default reverted.
``python score.py CASE`` prints, by case:

* all_failed: nan for every run;
* base_failed: nan where the time is 1.0's (release A, the step's base, as compare's side A);
* one_failed: nan where 2.0's hunk is reverted (one factor's set);
* constant: 100;
* noisy: the time, times 1 + U(0, 3 %) (the one-run-per-set case);
* anything else: the time.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "explain"))
from toyrelease import NAME, make_wheels  # noqa: E402

SCORE = f"""import random, sys, time
import {NAME}.core as c
spent = []
time.sleep = spent.append  # the release's cost, counted, not slept
c.Worker().run()
t = round(sum(spent) * 1e6, 3)
case = sys.argv[1]
fails = {{"all_failed": True, "base_failed": t == 100000, "one_failed": t == 140000}}
if fails.get(case, False):
    print("nan")
elif case == "constant":
    print(100)
elif case == "noisy":
    print(t * (1 + 0.03 * random.random()))
else:
    print(t)
"""


def main(out: Path) -> None:
    """Write the toy's wheels and the score script into ``out``."""
    make_wheels(out / "wheels")
    (out / "score.py").write_text(SCORE)


if __name__ == "__main__":
    main(Path(sys.argv[1]).resolve())
