"""A Dask program as a user writes it with collections: its own LocalCluster of worker
processes, ``dask.delayed`` squares reduced by a tree of sums, run by ``dask.compute``; it
prints only its makespan. It knows nothing of perflab. ``python dask_compute_app.py [TASKS]``."""

import sys
import time

import dask
from distributed import Client, LocalCluster


@dask.delayed
def square(x):
    return x * x


@dask.delayed
def total(*parts):
    return sum(parts)


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
    cluster = LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0"
    )
    with cluster, Client(cluster):
        began = time.perf_counter()
        parts = [square(i) for i in range(n)]
        while len(parts) > 1:
            parts = [total(*parts[i : i + 8]) for i in range(0, len(parts), 8)]
        (result,) = dask.compute(parts[0], optimize_graph=False)
        makespan = time.perf_counter() - began
    assert result == sum(i * i for i in range(n)), result
    print(f"{makespan:.3f}")


if __name__ == "__main__":
    main()
