"""Store cost at scale: per-run overhead of a fast black-box command and ``campaign status``
with 0, 10,000 and 100,000 runs already stored over many campaigns.

    .venv/bin/python bench/store_scale.py                 # 10k and 100k, 5,000-run campaigns
    .venv/bin/python bench/store_scale.py --rounds 6 --runs 30

Three stores are filled synthetically (through the Store API, in batches) with copies of a
real record (a measured ``echo`` run, re-keyed, its start times spread over days), in
campaigns of ``--campaign-size`` runs. Then, round after round, the same small campaign of
``--runs`` runs of ``echo 1`` (``create_ordered`` + ``run_campaign``, the CLI's path without
its start-up) runs in each store, in a rotated order: per-run overhead is the campaign's
wall time / runs. Printed: each store's median per-run ms, and the ratio to the empty store
per round with a 95 % t interval of the log ratios (ratios within a round are what hold on a
shared machine). Last: ``status()`` of a full campaign in each store and the query plans of
the per-run and status queries (an index, never a scan of every run).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from pairs import ratio_text  # noqa: E402

from perflab.campaign.definition import CampaignDef  # noqa: E402
from perflab.campaign.plan import create_ordered, run_campaign, status  # noqa: E402
from perflab.campaign.store import Store  # noqa: E402
from perflab.run.measure import measure  # noqa: E402
from perflab.run.record import RunRecord  # noqa: E402
from perflab.spec import RunSpec  # noqa: E402


def fill(store: Store, total: int, size: int, template: dict) -> None:
    """``total`` stored runs in campaigns of ``size``, each with a planned row per run."""
    t0 = datetime(2026, 1, 1, tzinfo=UTC)
    for c in range(total // size):
        name = f"filler{c:04d}"
        definition = CampaignDef(
            name=name,
            base=RunSpec(command="echo 1").to_dict(),
            factors=["a", "b"],
            catalogs=[],
            design="ordered",
            sets=4,
            created_at=(t0 + timedelta(hours=c)).isoformat(timespec="seconds"),
        )
        plan = [(["a"] if i % 2 else ["b"], 0) for i in range(size)]
        store.create_campaign(definition, plan)
        for lo in range(0, size, 1000):
            items = []
            for seq in range(lo, min(size, lo + 1000)):
                start = t0 + timedelta(hours=c, seconds=seq)
                rec = RunRecord.from_dict(
                    {
                        **template,
                        "run_id": uuid.uuid4().hex[:16],
                        "campaign": name,
                        "started_at": start.isoformat(timespec="milliseconds"),
                        "ended_at": (start + timedelta(seconds=0.5)).isoformat(
                            timespec="milliseconds"
                        ),
                        "treatments": ["a"] if seq % 2 else ["b"],
                        "us_per_task": 1000.0 + seq % 97,
                    }
                )
                items.append((rec, seq))
            store.add_runs(items)


def per_run_ms(store: Store, name: str, runs: int, root: str) -> float:
    base = RunSpec(command="echo 1", run_root=root)
    create_ordered(store, name, base, [], [[] for _ in range(runs)])
    t0 = time.perf_counter()
    counts = run_campaign(store, name)
    if counts["ok"] != runs:
        raise SystemExit(f"{name}: {counts}")
    return (time.perf_counter() - t0) * 1000 / runs


def plans(store: Store) -> None:
    queries = {
        "pending": "SELECT p.seq FROM planned p LEFT JOIN runs r ON r.campaign = p.campaign "
        "AND r.seq = p.seq WHERE p.campaign = 'x' AND r.run_id IS NULL ORDER BY p.seq",
        "insert lease check": "SELECT token FROM leases WHERE campaign='x'",
        "counts": "SELECT status, COUNT(*) FROM runs WHERE campaign='x' GROUP BY status",
        "status durations": "SELECT started_at FROM runs WHERE campaign='x' "
        "ORDER BY started_at DESC LIMIT 100",
        "status latest": "SELECT seq FROM runs WHERE campaign='x' ORDER BY started_at DESC LIMIT 5",
        "status best": "SELECT treatments FROM runs WHERE campaign='x' AND status='ok' "
        "ORDER BY us_per_task LIMIT 1",
    }
    for what, sql in queries.items():
        plan = "; ".join(r[3] for r in store.db.execute("EXPLAIN QUERY PLAN " + sql))
        print(f"  {what:<20} {plan}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--sizes", default="0,10000,100000")
    ap.add_argument("--campaign-size", type=int, default=5000)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--runs", type=int, default=30)
    ns = ap.parse_args()
    sizes = [int(x) for x in ns.sizes.split(",")]
    print(f"load: {os.getloadavg()}")
    with tempfile.TemporaryDirectory(prefix="perflab-store-") as tmp:
        os.environ["PERFLAB_HOME"] = str(Path(tmp, "home"))
        Path(tmp, "home").mkdir(mode=0o700)
        root = str(Path(tmp, "runs"))
        Path(root).mkdir(mode=0o700)
        template = measure(RunSpec(command="echo 1", run_root=root)).to_dict()
        stores = {}
        for n in sizes:
            t0 = time.perf_counter()
            stores[n] = Store(Path(tmp, f"store{n}.db"))
            fill(stores[n], n, ns.campaign_size, template)
            db = Path(tmp, f"store{n}.db")
            mb = db.stat().st_size / 2**20 if db.exists() else 0.0
            print(f"filled {n} runs in {time.perf_counter() - t0:.1f} s ({mb:.0f} MiB)")
        got: dict[int, list[float]] = {n: [] for n in sizes}
        for r in range(ns.rounds):
            order = sizes[r % len(sizes) :] + sizes[: r % len(sizes)]
            for n in order:
                got[n].append(per_run_ms(stores[n], f"bench{r}", ns.runs, root))
            print(f"round {r + 1}: " + ", ".join(f"{n}: {got[n][-1]:.1f} ms" for n in sizes))
        for n in sizes:
            line = f"{n:>7} stored: median {statistics.median(got[n]):.1f} ms per run"
            if n != sizes[0]:
                ratios = [a / b for a, b in zip(got[n], got[sizes[0]], strict=True)]
                line += f"; / {sizes[0]} stored: {ratio_text(ratios)}"
            print(line)
        for n in sizes:
            if n == 0:
                continue
            name = "filler0000"
            times = []
            for _ in range(5):
                t0 = time.perf_counter()
                status(stores[n], name)
                times.append((time.perf_counter() - t0) * 1000)
            print(
                f"status of a {ns.campaign_size}-run campaign, {n} stored: "
                f"median {statistics.median(times):.1f} ms (min {min(times):.1f})"
            )
        print("query plans:")
        plans(stores[sizes[-1]])
        print(f"load: {os.getloadavg()}")


if __name__ == "__main__":
    main()
