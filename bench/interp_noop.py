"""A Parsl HTEX noop workflow as a program of its own, the command of the interpreter
campaigns (bench/interp_campaigns.py): it runs ``TASKS`` empty tasks after a warm-up through
a HighThroughputExecutor on this machine (loopback, encrypted) and prints
``{"us_per_task": …}``. Run under a built variant by perflab (``--treat py_gil=off``), every
one of its Python processes (this one, the interchange, the workers) proves the variant.

    python bench/interp_noop.py [TASKS] [WORKERS]
"""

from __future__ import annotations

import json
import sys
import time

import parsl
from parsl import python_app
from parsl.config import Config
from parsl.executors import HighThroughputExecutor
from parsl.providers import LocalProvider


@python_app
def noop() -> None:
    return None


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
    workers = int(sys.argv[2]) if len(sys.argv) > 2 else 2
    executor = HighThroughputExecutor(
        label="htex_local",
        address="127.0.0.1",
        encrypted=True,
        max_workers_per_node=workers,
        provider=LocalProvider(init_blocks=1, min_blocks=1, max_blocks=1),
    )
    with parsl.load(Config(executors=[executor], run_dir="runinfo", strategy_period=0.5)):
        for f in [noop() for _ in range(100)]:  # warm-up: the workers are up and connected
            f.result()
        began = time.perf_counter()
        for f in [noop() for _ in range(n)]:
            f.result()
        took = time.perf_counter() - began
    print(json.dumps({"us_per_task": took / n * 1e6}))


if __name__ == "__main__":
    main()
