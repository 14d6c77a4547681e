"""``scripts/slurm`` (``python -m perflab.batch.slurmcli``): a throwaway Slurm from the
command line, up until Ctrl-C or SIGTERM; ``--cleanup`` removes what killed ones left."""

from __future__ import annotations

import signal
import time
from types import FrameType

from perflab.batch.slurm import SlurmCluster, sweep_dead_clusters
from perflab.errors import PerflabError


def main(argv: list[str] | None = None) -> int:
    """``python -m perflab.batch.slurm [--nodes [N]] [--cleanup]``: start a cluster, print
    its environment, wait for Ctrl-C (or SIGTERM) and tear it down; ``--cleanup`` only
    removes what killed clusters left (daemons, directories, namespaces, veths, bridges)."""
    import argparse

    parser = argparse.ArgumentParser(prog="scripts/slurm", description=main.__doc__)
    parser.add_argument(
        "--nodes", type=int, nargs="?", const=4, default=0,
        help="N nodes (default 4), each a slurmd in its own network and UTS namespace on "
        "a private bridge (needs root); without it: one slurmd on loopback",
    )  # fmt: skip
    parser.add_argument("--cleanup", action="store_true", help="remove leftovers and exit")
    args = parser.parse_args(argv)
    if args.cleanup:
        sweep_dead_clusters()
        return 0
    cluster = SlurmCluster(nodes=args.nodes)

    def on_signal(signum: int, frame: FrameType | None) -> None:
        raise KeyboardInterrupt

    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, on_signal)
    try:
        cluster.start()
        print(f"export SLURM_CONF={cluster.conf}", flush=True)
        where = ", ".join(
            f"{n} {a}" for n, a in zip(cluster.nodes, cluster.node_addrs, strict=True)
        )
        print(
            f"# throwaway Slurm: partition {cluster.partition}, nodes {where} "
            f"({cluster.cpus} CPUs each), controller {cluster.addr}:{cluster.ctld_port}, "
            f"files in {cluster.root}; Ctrl-C stops it",
            flush=True,
        )
        while all(p.poll() is None for p in cluster.procs.values()):
            time.sleep(1)
        print("perflab: a Slurm daemon exited; stopping the cluster", flush=True)
        return 1
    except KeyboardInterrupt:
        return 0
    except PerflabError as exc:
        print(f"perflab: {exc}", flush=True)
        return 2
    finally:
        cluster.stop()


if __name__ == "__main__":
    raise SystemExit(main())
