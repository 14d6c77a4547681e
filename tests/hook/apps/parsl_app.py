"""A Parsl workflow as a user writes it: its own Config (HTEX on a LocalProvider, its own
run_dir), a map over many tiny tasks and a reduction tree; it prints only its makespan.
It knows nothing of perflab. ``python parsl_app.py [TASKS] [threads]``."""

import sys
import time

import parsl
from parsl import python_app
from parsl.config import Config
from parsl.executors import HighThroughputExecutor, ThreadPoolExecutor
from parsl.providers import LocalProvider


@python_app
def square(x):
    return x * x


@python_app
def total(*parts):
    return sum(parts)


def reduce_tree(futures, fan_in=8):
    while len(futures) > 1:
        futures = [total(*futures[i : i + fan_in]) for i in range(0, len(futures), fan_in)]
    return futures[0]


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
    if "threads" in sys.argv[2:]:
        executor = ThreadPoolExecutor(label="threads", max_threads=2)
    else:
        executor = HighThroughputExecutor(
            label="htex_local",
            max_workers_per_node=2,
            prefetch_capacity=0,
            provider=LocalProvider(init_blocks=1, min_blocks=1, max_blocks=1),
        )
    config = Config(executors=[executor], run_dir="runinfo", strategy_period=0.5)
    began = time.perf_counter()
    with parsl.load(config):
        result = reduce_tree([square(i) for i in range(n)]).result()
    assert result == sum(i * i for i in range(n)), result
    print(f"{time.perf_counter() - began:.3f}")


if __name__ == "__main__":
    main()
