"""Are command plans calibrated? Real planned A/A comparisons of two commands.

    PYTHONPATH=src python bench/command_plans.py [--comparisons 20] [--target 0.04]
        [--max-time 300] [--isolate] [--update-parts] [--out bench/out/command_plans.json]

For each command, the first ``compare --precision`` runs its A/A pilot (8 pairs of fresh
runs) and stores the parts; then ``--comparisons`` planned A/A comparisons follow, each
planned from the stored parts (no pilot) and run with its looks (``planned.precise_compare``,
the metric the command's wall time; with ``--update-parts`` each comparison's pairs are
pooled into the stored parts, as ``compare --update-parts`` does). Printed per command: the
reached CI half-width over the planned one and the wall time spent over the planned one —
mean, median and the share of comparisons within 20 % (half-width) and 25 % (wall time) —
and the load the runs recorded.
The node's load is whatever it is: the figures are said with it, never compared with another
day's.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import statistics
import tempfile
from pathlib import Path
from typing import Any

from perflab.compare.busy import load_of, load_text
from perflab.compare.gate import Side
from perflab.compare.planned import precise_compare
from perflab.spec import RunSpec

COMMANDS = {
    "python sum (CPU, ~0.2 s)": "python3 -c 'print(sum(i * i for i in range(1_500_000)) % 7 + 1)'",
    "sort | sha (pipes, ~0.1 s)": "seq 1 200000 | sort -r | sha1sum >/dev/null; echo 1",
}


def one(spec: RunSpec, target: float, max_time: float, say: Any, update: bool) -> dict[str, Any]:
    a, b = Side("A", spec), Side("B", spec)
    for s in (a, b):
        s.ready()
    o = {"alpha": 0.05, "threshold": 0.05, "min_runs": 4, "say": say, "update_parts": update}
    cmp = precise_compare(a, b, "wall_s", target, max_time, o)
    p = cmp.precision or {}
    return {
        "planned_half_width": p.get("planned_half_width"),
        "half_width": p.get("half_width"),
        "planned_wall_s": p.get("planned_wall_s"),
        "wall_s": p.get("wall_s"),
        "pairs": len(a.values),
        "planned_pairs": (p.get("plan") or {}).get("pairs"),
        "stopped": p.get("stopped"),
        "load": load_of([*a.records, *b.records]),
    }


def summary(rows: list[dict[str, Any]], key: str, planned: str, within: float) -> str:
    r = [x[key] / x[planned] for x in rows if x.get(key) and x.get(planned)]
    if not r:
        return f"{key}: n/a"
    share = sum(abs(v - 1) <= within for v in r) / len(r)
    return (
        f"{key} / planned: mean {statistics.fmean(r):.2f}, median {statistics.median(r):.2f}, "
        f"within ±{within:.0%}: {share:.0%} of {len(r)}"
    )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--comparisons", type=int, default=20)
    ap.add_argument("--target", type=float, default=0.04)
    ap.add_argument("--max-time", type=float, default=300.0)
    ap.add_argument("--isolate", action="store_true")
    ap.add_argument(
        "--update-parts",
        action="store_true",
        help="pool each comparison into the stored parts (compare --update-parts)",
    )
    ap.add_argument("--out", default="bench/out/command_plans.json")
    args = ap.parse_args()
    home = Path(tempfile.mkdtemp(prefix="perflab-command-plans-"))
    os.environ["PERFLAB_HOME"] = str(home)
    (home / "runs").mkdir(mode=0o700)
    quiet = lambda text: None  # noqa: E731
    out: dict[str, Any] = {
        "target": args.target,
        "isolate": args.isolate,
        "update_parts": args.update_parts,
        "commands": {},
    }
    for name, command in COMMANDS.items():
        spec = RunSpec(command=command, isolate="on" if args.isolate else None)
        spec = dataclasses.replace(spec, cwd=str(home))
        print(f"{name}: {command}", flush=True)
        rows = []
        for i in range(args.comparisons + 1):  # the first one pilots
            row = one(
                spec, args.target, args.max_time, print if i == 0 else quiet, args.update_parts
            )
            if i > 0:
                rows.append(row)
                print(f"  {i}: {row['pairs']} pairs (planned {row['planned_pairs']}), ±"
                      f"{row['half_width']:.2%} (planned ±{row['planned_half_width']:.2%}), "
                      f"{row['wall_s']:.0f} s (planned {row['planned_wall_s']:.0f} s), "
                      f"{row['stopped']}; {load_text(row['load'])}", flush=True)  # fmt: skip
        print("  " + summary(rows, "half_width", "planned_half_width", 0.20))
        print("  " + summary(rows, "wall_s", "planned_wall_s", 0.25))
        out["commands"][name] = {"command": command, "rows": rows}
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(out, indent=1))
    print(f"written {args.out}")


if __name__ == "__main__":
    main()
