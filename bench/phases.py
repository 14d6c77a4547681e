"""Where each engine's run time goes (``measurement.phases``), fast teardown vs ``--graceful``.

    .venv/bin/python bench/phases.py                          # every local engine, 3 pairs each
    .venv/bin/python bench/phases.py --engines parsl-htex --pairs 6 --tasks 2000

For each engine, interleaved pairs of runs (``perflab.measure`` of the noop workload, in
alternating order): one with the default fast teardown (the tree is killed once the result is
written), one ``graceful`` (the engine's own clean shutdown). Printed per engine: the median
seconds of each phase on both sides, and the ratio graceful / fast of the whole run's time with
a 95 % t interval of the log ratios (ratios within a pair are what hold on a shared machine),
and of the counted window's tasks/s (which teardown must not change).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from pairs import ratio_text  # noqa: E402

from perflab.run.measure import measure  # noqa: E402
from perflab.run.record import RunRecord  # noqa: E402
from perflab.spec import RunSpec  # noqa: E402

ENGINES = ["parsl-htex", "dask", "cf-processes", "parsl-threads", "cf-threads"]


def one(target: str, tasks: int, graceful: bool, root: str) -> RunRecord:
    spec = RunSpec(target=target, workload="noop", tasks=tasks, graceful=graceful, run_root=root)
    rec = measure(spec)
    if rec.status != "ok":
        raise SystemExit(f"{target}: {rec.status}: {rec.error}")
    return rec


def bench(target: str, tasks: int, pairs: int, root: str) -> None:
    sides: dict[bool, list[RunRecord]] = {False: [], True: []}
    for i in range(pairs):
        for graceful in (False, True) if i % 2 == 0 else (True, False):
            sides[graceful].append(one(target, tasks, graceful, root))
    fast, slow = sides[False], sides[True]
    print(f"\n{target} ({tasks} noop tasks, {pairs} pairs; load {os.getloadavg()[0]:.1f})")
    print(f"{'phase':<16}{'fast s':>9}{'graceful s':>12}")
    for name in fast[0].measurement["phases"]:
        f = statistics.median(r.measurement["phases"][name] for r in fast)
        g = statistics.median(r.measurement["phases"][name] for r in slow)
        print(f"{name:<16}{f:9.3f}{g:12.3f}")
    total = [
        g.measurement["phases"]["total"] / f.measurement["phases"]["total"]
        for f, g in zip(fast, slow, strict=True)
    ]
    rate = [g.tasks_per_s / f.tasks_per_s for f, g in zip(fast, slow, strict=True)]  # type: ignore[operator]
    share = statistics.median(
        r.measurement["window_s"] / r.measurement["phases"]["total"] for r in fast
    )
    print(f"graceful / fast: run time {ratio_text(total)}; window tasks/s {ratio_text(rate)}")
    print(f"window share of the run (fast): {100 * share:.0f}%")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--engines", default=",".join(ENGINES))
    ap.add_argument("--tasks", type=int, default=2000)
    ap.add_argument("--pairs", type=int, default=3)
    ns = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="perflab-phases-") as tmp:
        os.environ.setdefault("PERFLAB_HOME", str(Path(tmp, "home")))
        Path(tmp, "runs").mkdir(mode=0o700)
        for target in ns.engines.split(","):
            bench(target, ns.tasks, ns.pairs, str(Path(tmp, "runs")))


if __name__ == "__main__":
    main()
