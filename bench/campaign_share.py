"""Share of a campaign's wall time spent inside counted windows, from its records.

    .venv/bin/python bench/campaign_share.py                      # the demo's campaign, this tree
    .venv/bin/python bench/campaign_share.py --rev a3fe873~1      # ... as perflab REV ran it
    .venv/bin/python bench/campaign_share.py --store S --campaign C   # an existing campaign
    .venv/bin/python bench/campaign_share.py --store S --campaign t1. --prefix   # a tune's runs

The demo's design and settings (scripts/demo: HTEX, noop, 2,000 tasks, six factors,
``sequences`` with 4 orders) run in a fresh private home, with the perflab of the working
tree or of a git revision (``git archive`` into a temporary directory, imported through
PYTHONPATH). The share is sum(window_s) / (last ended_at - first started_at) over the stored
runs, i.e. what a user waits for versus what is measured; per-phase medians are printed when
the records have ``measurement.phases``.
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from perflab.run.phases import window_share  # noqa: E402

DEMO = [
    "--target", "parsl-htex", "--workload", "noop", "--tasks", "2000", "--timeout", "120",
    "--factors",
    "cfg_noop_logging,cfg_rundir_ramfs,cfg_prefetch=100,cfg_poll_100,src_submit_biglogs_remove,"
    "affinity",
    "--design", "sequences", "--design-opt", "sequences=4",
]  # fmt: skip


def perflab(src: Path, home: Path, *args: str) -> None:
    env = {**os.environ, "PYTHONPATH": str(src), "PERFLAB_HOME": str(home)}
    proc = subprocess.run([sys.executable, "-m", "perflab", *args], env=env, cwd=home)
    if proc.returncode not in (0, 1):
        raise SystemExit(f"perflab {' '.join(args)}: exit {proc.returncode}")


def records(store: Path, campaign: str, prefix: bool = False) -> list[dict]:
    """The campaign's records; with ``prefix``, of every campaign whose name starts with it
    (a tune's stages are campaigns ``NAME.1-...``, ``NAME.2-...``)."""
    db = sqlite3.connect(f"file:{store}?mode=ro", uri=True)
    where = "substr(campaign, 1, length(?)) = ?" if prefix else "campaign = ? AND ? IS NOT NULL"
    rows = db.execute(f"SELECT record FROM runs WHERE {where} ORDER BY started_at", (campaign,) * 2)
    return [json.loads(r[0]) for r in rows]


def report(recs: list[dict]) -> None:
    share = window_share(recs)
    if share is None:
        raise SystemExit("no finished runs")
    print(
        f"runs {share['runs']}, wall {share['wall_s']:.1f} s, inside windows "
        f"{share['window_s']:.1f} s: share {100 * share['share']:.1f}%"
    )
    phased = [r["measurement"]["phases"] for r in recs if "phases" in (r["measurement"] or {})]
    if phased:
        print(f"{'phase':<16}{'median s':>10}{'sum s':>10}")
        for name in phased[0]:
            vals = [p[name] for p in phased]
            print(f"{name:<16}{statistics.median(vals):10.3f}{sum(vals):10.1f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--rev", help="git revision of perflab to run (default: the working tree)")
    ap.add_argument("--store", help="report an existing store's campaign instead of running")
    ap.add_argument("--campaign", default="demo")
    ap.add_argument("--prefix", action="store_true", help="every campaign named CAMPAIGN...")
    ns = ap.parse_args()
    if ns.store:
        report(records(Path(ns.store), ns.campaign, ns.prefix))
        return
    with tempfile.TemporaryDirectory(prefix="perflab-share-") as tmp:
        home = Path(tmp, "home")
        home.mkdir(mode=0o700)
        src = ROOT / "src"
        if ns.rev:
            archive = subprocess.run(
                ["git", "-C", str(ROOT), "archive", ns.rev], capture_output=True, check=True
            ).stdout
            subprocess.run(["tar", "-x", "-C", tmp], input=archive, check=True)
            src = Path(tmp, "src")
        print(f"load before: {os.getloadavg()}", flush=True)
        perflab(src, home, "campaign", "create", ns.campaign, *DEMO)
        t0 = time.monotonic()
        perflab(src, home, "campaign", "run", ns.campaign)
        print(f"campaign run: {time.monotonic() - t0:.1f} s; load after: {os.getloadavg()}")
        report(records(home / "perflab.db", ns.campaign))


if __name__ == "__main__":
    main()
