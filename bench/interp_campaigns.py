"""The seed's "Python 3.13" factor taken apart: campaigns over the built interpreter variants
(``py``, ``py_gil``, ``py_pgo``, ``py_jit``: docs/interpreters.md) on a Parsl HTEX noop
program and a CPU-bound threaded program, through perflab's own ``campaign`` and
``analyze``; the variants must be built first (``perflab interpreters list``).

    .venv/bin/python bench/interp_campaigns.py --sets "-" "py=3.11" "py_gil=off" [--runs 5]

Each set is one line of an explicit design (``-``: the defaults, 3.13 with the GIL, no PGO,
no JIT); a set whose variant is not built is refused by ``campaign create`` with the command
that builds it. For each program it creates and runs one campaign (the sets interleaved,
``--runs`` each), then prints ``analyze`` of µs/task and of user CPU seconds (÷ the tasks
for CPU per task). Everything goes under ``bench/out/interp/`` and the store there.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PROGRAMS = {
    "noop": "python bench/interp_noop.py {tasks} 2",
    "threads": "python bench/interp_threads.py {tasks} 20000 2",
}


def perflab(*args: str) -> str:
    argv = [sys.executable, "-m", "perflab", *args]
    print("$ perflab " + " ".join(args), flush=True)
    proc = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True)
    if proc.returncode not in (0, 1):
        sys.exit(f"perflab {args[0]} failed ({proc.returncode}): {proc.stderr.strip()}")
    return proc.stdout


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sets", nargs="+", required=True, help="Treatment sets (- untreated).")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--programs", nargs="+", default=list(PROGRAMS), choices=list(PROGRAMS))
    ap.add_argument("--tasks", type=int, default=1000)
    ap.add_argument("--tag", default=time.strftime("%H%M"))
    args = ap.parse_args()
    out = ROOT / "bench" / "out" / "interp"
    out.mkdir(parents=True, exist_ok=True)
    os.environ.setdefault("PERFLAB_HOME", str(out / "home"))
    store = str(out / "store.db")
    sets = out / f"sets-{args.tag}.txt"
    sets.write_text("\n".join(args.sets) + "\n")
    factors = sorted({t for s in args.sets if s != "-" for t in s.split(",")})
    for prog in args.programs:
        name = f"interp_{prog}_{args.tag}"
        command = PROGRAMS[prog].format(tasks=args.tasks)
        design = ["--design", "explicit", "--design-opt", f"file={sets}"]
        perflab("campaign", "create", name, "--command", command, "--metric", "us_per_task",
                "--factors", ",".join(factors), *design, "--runs", str(args.runs),
                "--timeout", "900", "--store", store)  # fmt: skip
        print(perflab("campaign", "run", name, "--store", store))
        for metric in ("us_per_task", "cpu_user_s"):
            print(perflab("analyze", name, "--metric", metric, "--store", store))


if __name__ == "__main__":
    main()
