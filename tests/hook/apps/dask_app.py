"""A Dask program as a user writes it: its own LocalCluster of worker processes, a map over
many tiny tasks and a reduction tree; it prints only its makespan. It knows nothing of
perflab. ``python dask_app.py [TASKS]``."""

import sys
import time

from distributed import Client, LocalCluster


def square(x):
    return x * x


def total(*parts):
    return sum(parts)


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
    cluster = LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0"
    )
    with cluster, Client(cluster) as client:
        began = time.perf_counter()
        futures = client.map(square, range(n))
        while len(futures) > 1:
            futures = [client.submit(total, *futures[i : i + 8]) for i in range(0, len(futures), 8)]
        result = futures[0].result()
        makespan = time.perf_counter() - began
    assert result == sum(i * i for i in range(n)), result
    print(f"{makespan:.3f}")


if __name__ == "__main__":
    main()
