"""The atlas on its synthetic truth over seeds: how often the first update names the three
planted steps (a regression at commit 15 fixed at 19, a regression at 40, of 60 commits; one
commit does not build), how often it names a false one, whether the second update (20 more
commits, a step at 70) measures only the new commits and names the new step, and the runs it
took against measuring every commit at a fixed n.

    .venv/bin/python bench/atlas_seeds.py [--seeds 10] [--every 1] [--sigma 0.02]

The repository is real (git, hunks from its trees); each run is the commit's declared cost
times seeded log-normal noise (sd ``--sigma`` of a run's log) and a slow drift
(``atlas.measure.Simulated``), so the figures do not depend on the machine.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "tests" / "atlas"))
sys.path.insert(0, str(ROOT / "tests"))  # gitrepo, the toy repositories' git helper

from atlasrepo import APPENDED, BROKEN, PLANTED, SCORE, declared, grow, make_repo  # noqa: E402

from perflab.atlas.define import init  # noqa: E402
from perflab.atlas.measure import Simulated  # noqa: E402
from perflab.atlas.project import benchmark  # noqa: E402
from perflab.atlas.store import Store  # noqa: E402
from perflab.atlas.update import update  # noqa: E402


def one(seed: int, every: int, sigma: float, root: Path) -> dict[str, Any]:
    repo = root / "repo"
    shas = make_repo(repo)
    d = root / "atlas"
    init(d, repo, "toyatlas", benchmark("score", SCORE, None, None, "us_per_task"), every=every)
    cache: dict[str, float] = {}

    def cost(key: str) -> float:
        return cache.setdefault(key, declared(repo, key))

    m = Simulated(cost, sigma=sigma, seed=seed, broken=frozenset({shas[BROKEN]}))
    first = update(d, measurer=m)
    store = Store(d)
    named = {c["sha"] for s in store.steps() for c in s.data.get("culprits", [])}
    comparisons = sum(
        json.loads(r[0])["runs"] for r in store.db.execute("SELECT data FROM comparisons")
    )
    store.close()
    truth = {shas[k] for k in PLANTED}
    new = grow(repo, 60, 80, APPENDED, broken=None)
    second = update(d, measurer=m)
    measured2 = second.measured.get("score", [])
    store = Store(d)
    named2 = {c["sha"] for s in store.steps() for c in s.data.get("culprits", [])}
    series_runs = store.run_count()
    store.close()
    return {
        "seed": seed, "found": truth <= named, "false": len(named - truth),
        "second_only_new": bool(measured2) and set(measured2) <= set(new),
        "second_named_new": new[70 - 60] in named2, "second_false": len(named2 - truth - {new[10]}),
        "series_runs_first": first.runs, "gate_and_bisect_runs_first": comparisons,
        "runs_total": series_runs + comparisons,
    }  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--every", type=int, default=1)
    ap.add_argument("--sigma", type=float, default=0.02)
    ns = ap.parse_args()
    rows = []
    for seed in range(ns.seeds):
        with tempfile.TemporaryDirectory() as tmp:
            os.environ["PERFLAB_HOME"] = str(Path(tmp) / "home")
            rows.append(one(seed, ns.every, ns.sigma, Path(tmp)))
        print(json.dumps(rows[-1]), flush=True)
    steps_named = len(PLANTED) + len(APPENDED)
    first = sum(int(r["series_runs_first"]) + int(r["gate_and_bisect_runs_first"]) for r in rows)
    total = sum(int(r["runs_total"]) for r in rows)
    print(json.dumps({
        "seeds": ns.seeds, "every": ns.every, "sigma": ns.sigma,
        "first_update_named_all_three": sum(bool(r["found"]) for r in rows),
        "first_update_with_a_false_step": sum(bool(r["false"]) for r in rows),
        "second_update_named_the_new_step": sum(bool(r["second_named_new"]) for r in rows),
        "second_update_measured_only_new_commits": sum(bool(r["second_only_new"]) for r in rows),
        "mean_runs_first_update": first / len(rows),
        "mean_runs_per_step_named_both_updates": total / len(rows) / steps_named,
        "fixed_n_every_commit_runs": 80 * 12,
        "fixed_n_note": "all 80 commits at the gate's most runs (12), nothing more",
    }, indent=1))  # fmt: skip


if __name__ == "__main__":
    main()
