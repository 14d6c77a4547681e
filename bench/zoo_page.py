"""One scoreboard page from several zoo campaigns (e.g. a METG search and the workflow rows
measured as separate zoos): their runs in one table, METG beside the workflow rows.

    python bench/zoo_page.py metg4 wf3b -o out/ [--basis peak] [--store .perflab/perflab.db]
"""

from __future__ import annotations

import argparse

import pandas as pd

from perflab.analysis.zoo import rows_for_table, zoo_table
from perflab.campaign.store import Store
from perflab.report.zoo import print_zoo, write_zoo_report
from perflab.zoo.frame import zoo_frame


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("names", nargs="+")
    ap.add_argument("-o", "--output", required=True)
    ap.add_argument("--basis", default="peak")
    ap.add_argument("--store", default=".perflab/perflab.db")
    a = ap.parse_args()
    store = Store(a.store)
    frames, limits = [], {}
    for name in a.names:
        frames.append(zoo_frame(store.records(name)))
        search = store.campaign(name).design_info.get("metg_search") or {}
        limits.update({t: s["reason"] for t, s in search.items() if s.get("stopped")})
    table = zoo_table(pd.concat(frames, ignore_index=True), 0.5, a.basis, limits)
    rows = rows_for_table(table)
    print_zoo(table, rows, "+".join(a.names))
    print(f"wrote {write_zoo_report(table, rows, a.output, '+'.join(a.names))}")


if __name__ == "__main__":
    main()
