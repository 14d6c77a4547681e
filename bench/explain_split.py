"""Split a coarse factor of ``perflab explain`` (modules reverted whole) into two groups of
modules and measure which group carries its share: B, B + group 1, B + group 2 and B + both,
in random order per round, on the focus stage's own base (release B, safety settings).

    python bench/explain_split.py --name explain26 --factor revert_modules_11 \\
        --group 'parsl.executors.high_throughput.*' --rounds 6

Each module of the factor goes to group 1 when it matches a ``--group`` glob, else to
group 2. A group that does not run alone shows as failed runs (its cause is printed).
Prints each condition's ratio to B (time with the group reverted / B's) with a 95% t
interval from an OLS on log(metric) with round blocks (statsmodels): group 1 alone, group 2
alone and both; "both" against the two alone says whether the groups' effects add up.
"""

from __future__ import annotations

import argparse
import fnmatch
import hashlib
import json
import math
import sys
import tomllib
from pathlib import Path

import numpy as np
import pandas as pd
import statsmodels.formula.api as smf

from perflab.campaign.plan import create_ordered, run_campaign
from perflab.campaign.store import Store
from perflab.explain.plan import rounds, to_toml, value
from perflab.files import home_dir
from perflab.spec import RunSpec


def split_catalog(catalog: Path, factor: str, globs: list[str], out: Path) -> list[str]:
    """Write ``out``: the factor's transforms as two factors, ``<factor>_g1`` (modules that
    match a glob) and ``<factor>_g2`` (the rest); their names, the empty group left out."""
    table = tomllib.loads(catalog.read_text())["factor"][factor]
    groups: dict[str, list[dict]] = {"g1": [], "g2": []}
    for t in table["transform"]:
        hit = any(fnmatch.fnmatchcase(t["module"], g) for g in globs)
        groups["g1" if hit else "g2"].append(t)
    factors = {}
    for g, ts in groups.items():
        if ts:
            mods = ", ".join(t["module"] for t in ts)
            factors[f"{factor}_{g}"] = {
                "description": f"A's {mods} (whole modules)",
                "category": table.get("category", "source_keep"),
                "transform": ts,
            }
    out.write_text(to_toml(factors))
    return list(factors)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--name", required=True, help="the explain's --name")
    ap.add_argument("--factor", required=True, help="its coarse factor (revert_modules_N)")
    ap.add_argument("--group", action="append", required=True, help="module glob of group 1")
    ap.add_argument("--rounds", type=int, default=6)
    ap.add_argument("--store", default=None)
    ap.add_argument("--metric", action="append", default=None)
    ns = ap.parse_args()
    metrics = ns.metric or ["us_per_task", "cpu_us_per_task"]
    store = Store(ns.store) if ns.store else Store(home_dir() / "perflab.db")
    focus = store.campaign(f"{ns.name}.3-focus")
    base = RunSpec.from_dict(focus.base)
    folder = home_dir("explain", ns.name)
    key = hashlib.sha256(json.dumps([sorted(ns.group), ns.rounds]).encode()).hexdigest()[:6]
    catalog = folder / f"split-{ns.factor}-{key}.toml"
    names = split_catalog(folder / "factors.toml", ns.factor, ns.group, catalog)
    conditions = {"B": [], **{n: [n] for n in names}, "both": names}
    plan = rounds(conditions, ns.rounds, seed=1)
    camp = f"{ns.name}.split-{ns.factor}-{key}"
    if camp not in store.campaign_names():
        sets = [s for _, _, s in plan]
        create_ordered(store, camp, base, names, sets, [str(catalog)], {"split": ns.group})
    counts = run_campaign(store, camp)
    print(json.dumps(counts))
    recs = dict(store.records_by_seq(camp))
    rows = []
    for (cond, rnd, _), (seq, _) in zip(plan, store.planned(camp), strict=True):
        rec = recs.get(seq)
        if rec is None or rec.status != "ok":
            cause = (rec.error or rec.status).strip().splitlines()[-1] if rec else "not run"
            print(f"round {rnd} {cond}: {cause}", file=sys.stderr)
            continue
        row: dict = {"round": rnd, "cond": cond}
        row.update({m: value(rec, m) for m in metrics})
        rows.append(row)
    df = pd.DataFrame(rows)
    for m in metrics:
        d = df.dropna(subset=[m])
        d = d.assign(log_y=np.log(d[m].astype(float)))
        fit = smf.ols("log_y ~ C(cond, Treatment('B')) + C(round)", data=d).fit()
        ci = fit.conf_int(0.05)
        print(f"[{m}] {len(d)} runs; ratio = time of the condition / B's (same round)")
        for term in fit.params.index:
            if not term.startswith("C(cond"):
                continue
            lo, hi = (math.exp(x) for x in ci.loc[term])
            ratio, p = math.exp(fit.params[term]), fit.pvalues[term]
            cond = term.split("[T.")[1].rstrip("]")
            print(f"  {cond:30s} {ratio:.3f} (95% CI {lo:.3f}-{hi:.3f}, p {p:.3g})")


if __name__ == "__main__":
    main()
