"""A CPU-bound threaded workload as a program of its own, the command of the interpreter
campaigns (bench/interp_campaigns.py): ``TASKS`` tasks of a pure-Python loop of ``ITERS``
iterations on a ThreadPoolExecutor of ``THREADS`` threads. With the GIL the threads take
turns on one core; free-threaded they can use every core. The work per task is a fixed
count of iterations (not a time), so a faster interpreter shows as less time per task.
Prints ``{"us_per_task": …}`` (wall time of the batch ÷ tasks).

    python bench/interp_threads.py [TASKS] [ITERS] [THREADS]
"""

from __future__ import annotations

import json
import sys
import time
from concurrent.futures import ThreadPoolExecutor


def work(iters: int) -> int:
    total = 0
    for i in range(iters):
        total += i * i % 7
    return total


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 200
    iters = int(sys.argv[2]) if len(sys.argv) > 2 else 20_000
    threads = int(sys.argv[3]) if len(sys.argv) > 3 else 2
    with ThreadPoolExecutor(threads) as pool:
        list(pool.map(work, [iters] * threads))  # warm-up: the threads exist
        began = time.perf_counter()
        results = list(pool.map(work, [iters] * n))
        took = time.perf_counter() - began
    assert len(results) == n
    print(json.dumps({"us_per_task": took / n * 1e6}))


if __name__ == "__main__":
    main()
