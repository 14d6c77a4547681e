"""Campaigns over a real, throwaway 4-node Slurm: each node a slurmd in its own network and
UTS namespace on a private bridge, the controller and munge on this host (issue 42).

One cluster serves the module. Its faults: a node killed mid-campaign, a job cancelled, the
driver SIGKILLed, the controller restarted; each campaign still stores every planned run
exactly once. And nothing of the cluster is left after it. (``scripts/slurm``'s own clusters:
tests/batch/test_cluster_command.py, which loadfile can run beside this file.)
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import psutil
import pytest

from attacker import as_nobody
from clusterkit import (
    CLUSTER_MARKS,
    cli_env,
    leftovers,
    run_perflab,
    where,
    write_config,
    write_score,
)
from perflab.batch import netns
from perflab.batch.slurm import SlurmCluster
from perflab.campaign.store import Store

pytestmark = CLUSTER_MARKS

NODES = 4


def _held(work: Path) -> list[str]:
    """The nodes of the runs waiting on the hold."""
    out = []
    for f in (work / "held").iterdir():
        with contextlib.suppress(OSError):
            out += f.read_text().split()[:1]  # empty while the run writes it
    return sorted(out)


def _hold(work: Path, runs: int = NODES) -> list[str]:
    """Hold the runs; return the nodes of the ``runs`` runs then waiting in flight."""
    for f in (work / "held").iterdir():
        f.unlink()
    (work / "hold").touch()
    _wait_for(lambda: len(_held(work)) >= runs)
    return _held(work)


@pytest.fixture(scope="module")
def cluster() -> Iterator[SlurmCluster]:
    c = SlurmCluster(nodes=NODES)
    c.start()
    daemons = [p.pid for p in c.procs.values()]
    try:
        yield c
    finally:
        c.stop()
        assert leftovers(os.getpid(), str(c.root), daemons) == []


#: The drivers a test started: one still running when the test ends (it failed) is stopped
#: with SIGTERM (perflab then stops its interchange and cancels its jobs).
_DRIVERS: list[subprocess.Popen[str]] = []


@pytest.fixture
def work(tmp_path: Path, cluster: SlurmCluster) -> Iterator[Path]:
    write_score(tmp_path)
    write_config(tmp_path / "slurm.py", cluster.addr, cluster.partition, NODES)
    yield tmp_path
    (tmp_path / "hold").unlink(missing_ok=True)
    while _DRIVERS:
        driver = _DRIVERS.pop()
        if driver.poll() is None:
            driver.terminate()
            driver.wait(timeout=60)
    # a test that failed may leave jobs holding nodes: the next test needs them all
    if cluster.jobs():
        cluster.run("scancel", *cluster.jobs(), check=False)
        _wait_for(lambda: cluster.jobs() == [], timeout=60)


def _create(work: Path, env: dict[str, str], name: str, command: str, reps: int) -> None:
    proc = run_perflab(work, env, "campaign", "create", name, "--command", command,
                    "--metric", "us_per_task",
                    "--factors", "a,b,c", "--design", "full", "--runs", str(reps),
                    "--store", str(work / "s.db"))  # fmt: skip
    assert proc.returncode == 0, proc.stderr


def _driver(work: Path, env: dict[str, str], name: str, config: str = "slurm.py") -> (
        subprocess.Popen[str]):  # fmt: skip
    argv = [sys.executable, "-m", "perflab", "campaign", "run", name, "--runner", "parsl",
            "--runner-config", config, "--store", str(work / "s.db"), "--json"]  # fmt: skip
    driver = subprocess.Popen(argv, cwd=work, env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True)  # fmt: skip
    _DRIVERS.append(driver)
    return driver


def _seqs(db: Path, name: str) -> list[int]:
    con = sqlite3.connect(db)
    try:
        rows = con.execute("SELECT seq FROM runs WHERE campaign=?", (name,)).fetchall()
    finally:
        con.close()
    return sorted(r[0] for r in rows)


def _wait_for(what: object, timeout: float = 300) -> None:
    deadline = time.monotonic() + timeout
    while not what():  # type: ignore[operator]
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.2)


def _no_jobs_left(cluster: SlurmCluster) -> None:
    """The driver cancelled its jobs as it ended: Slurm lists them (COMPLETING) a moment
    longer (stop 47's CI saw two). Left uncancelled, they would run out their 10-min walltime."""
    _wait_for(lambda: cluster.jobs() == [], timeout=30)


def _running(cluster: SlurmCluster) -> dict[str, str]:
    """Running jobs: id -> node."""
    out = cluster.run("squeue", "-h", "-t", "R", "-o", "%i %N").stdout.split("\n")
    return dict(line.split() for line in out if line.strip())


def _state(cluster: SlurmCluster, job: str) -> str:
    out = cluster.run("scontrol", "show", "job", "-o", job, check=False).stdout
    found = re.search(r"JobState=(\S+)", out)
    return found.group(1) if found else ""


def _finish(driver: subprocess.Popen[str], timeout: float = 240) -> dict[str, int]:
    out, err = driver.communicate(timeout=timeout)
    assert driver.returncode == 0, err[-3000:]
    return dict(json.loads(out.strip().splitlines()[-1]))


def _every_run_once(work: Path, name: str, planned: int, nodes: list[str]) -> list:
    assert _seqs(work / "s.db", name) == list(range(planned)), "each run stored once"
    records = Store(work / "s.db").records(name)
    where(records, nodes)
    return records


def _lost(work: Path, name: str) -> list[tuple[int, str]]:
    return [(r["seq"], r["cause"]) for r in Store(work / "s.db").unmeasured(name)]


def _shared_hosts(work: Path, env: dict[str, str], name: str) -> tuple[dict, str]:
    """analyze's shared_hosts JSON for campaign ``name``, and what it printed on stderr."""
    proc = run_perflab(work, env, "analyze", name, "--store", str(work / "s.db"), "--json")
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout)["shared_hosts"], proc.stderr


def test_a_node_killed_mid_campaign_loses_runs_that_are_measured_elsewhere_and_comes_back(
    work: Path, cluster: SlurmCluster
) -> None:
    """40 runs over 4 exclusive nodes; a node killed (slurmd and all in its namespace) once
    10 runs are stored: its run is stored apart with Slurm's NODE_FAIL and measured again
    in another job; every run stored once. The node, restarted while runs are left, is
    given a new block and measures runs of the same campaign again. No warning of a shared
    host: each run had its node to itself."""
    env = cli_env(work, cluster.env())
    _create(work, env, "k", "sleep 0.5; ./score.sh", reps=5)
    began = time.monotonic()
    driver = _driver(work, env, "k")
    _wait_for(lambda: len(_seqs(work / "s.db", "k")) >= 10)
    victim = _hold(work)[-1]  # 4 runs in flight, held: runs are left for the node's return
    jobs = _running(cluster)
    killed = cluster.kill_node(victim)
    for f in (work / "held").iterdir():  # its held run died without saying so
        if f.read_text().split()[:1] == [victim]:
            f.unlink()
    at = len(_seqs(work / "s.db", "k"))
    (dead,) = [j for j, n in jobs.items() if n == victim]
    _wait_for(lambda: _state(cluster, dead) == "NODE_FAIL", timeout=60)
    # the runner asks for a block in its place; it waits for a node
    _wait_for(lambda: cluster.run("squeue", "-h", "-t", "PD", "-o", "%i").stdout.strip(), 30)
    cluster.start_node(victim)
    revived = datetime.now(UTC).isoformat()
    # its new block's worker takes a run (the other nodes' are held): the node is used again
    _wait_for(lambda: victim in _held(work), timeout=120)
    (work / "hold").unlink()
    counts = _finish(driver)
    took = time.monotonic() - began
    assert counts["ok"] == 40
    records = _every_run_once(work, "k", 40, cluster.nodes)
    lost = _lost(work, "k")
    assert lost, "the killed node's run was lost"
    final = {s: r for s, r in Store(work / "s.db").records_by_seq("k")}
    for seq, cause in lost:
        assert f"on {victim} " in cause or victim in cause, cause
        assert "NODE_FAIL" in cause, cause
        # measured again in another job: on another node, or on this one back in a new block
        assert final[seq].env["batch"]["job_id"] != dead
    back = [r for r in records if r.env["batch"]["node"] == victim and r.started_at > revived]
    print(f"\nnode {victim} killed ({len(killed)} processes) after {at} runs; campaign of 40 "
          f"in {took:.1f} s; lost and rerun: " + "; ".join(
              f"seq {s} -> rerun on {final[s].env['batch']['node']} job "
              f"{final[s].env['batch']['job_id']} ({c[:160]})" for s, c in lost)
          + f"; {len(back)} runs on {victim} after its return, in job "
          f"{sorted({r.env['batch']['job_id'] for r in back})}")  # fmt: skip
    assert back, "the revived node measured runs of the campaign"
    assert {r.env["batch"]["job_id"] for r in back}.isdisjoint(jobs), "in a new block"
    # exclusive nodes: no two runs overlapped on one node; the nodes' networks are their own
    shared, said = _shared_hosts(work, env, "k")
    assert shared["pairs"] == [] and shared["warning"] is None and "warning" not in said
    assert shared["judged"] == 40 and shared["namespace_pairs"] > 0
    _no_jobs_left(cluster)


def test_a_cancelled_and_a_preempted_job_lose_their_runs_which_are_measured_elsewhere(
    work: Path, cluster: SlurmCluster
) -> None:
    """With 4 runs in flight, one job is cancelled (scancel) and another preempted (a job of
    the urgent partition takes its node; PreemptMode=CANCEL): each run lost is stored apart
    with Slurm's words and measured again; every run stored once."""
    env = cli_env(work, cluster.env())
    _create(work, env, "x", "sleep 0.5; ./score.sh", reps=1)
    driver = _driver(work, env, "x")
    nodes = _hold(work)  # a run in flight on each node
    on = {n: j for j, n in _running(cluster).items()}
    (cancelled, preempted), node = (on[nodes[0]], on[nodes[1]]), nodes[1]
    cluster.run("scancel", cancelled)
    urgent = cluster.run("sbatch", "-p", cluster.urgent, "-w", node, "--exclusive", "-o",
                         "/dev/null", "--wrap", "sleep 2").stdout.split()[-1]  # fmt: skip
    _wait_for(lambda: _state(cluster, preempted) == "PREEMPTED", timeout=60)
    (work / "hold").unlink()
    counts = _finish(driver)
    assert counts["ok"] == 8
    _every_run_once(work, "x", 8, cluster.nodes)
    lost = _lost(work, "x")
    print(f"\njob {cancelled} cancelled, job {preempted} preempted on {node} by {urgent}; "
          f"lost and rerun: {lost}")  # fmt: skip
    assert len(lost) == 2, lost
    assert any("CANCELLED" in c and f"job {cancelled} " in c for _, c in lost), lost
    assert any("PREEMPTED" in c and f"job {preempted} " in c for _, c in lost), lost
    _wait_for(lambda: cluster.jobs() == [], timeout=30)  # the urgent job ends by itself


def test_a_sigkilled_driver_is_resumed_without_a_lost_or_duplicate_run(
    work: Path, cluster: SlurmCluster
) -> None:
    env = cli_env(work, cluster.env())
    _create(work, env, "d", "sleep 0.5; ./score.sh", reps=2)
    driver = _driver(work, env, "d")
    db = work / "s.db"
    _wait_for(lambda: len(_seqs(db, "d")) >= 1)
    _hold(work)  # 4 runs in flight (16 runs: some are left to hold)
    driver.send_signal(signal.SIGKILL)
    driver.wait()  # not communicate(): its orphaned interchange holds the pipes open
    for pipe in (driver.stdout, driver.stderr):
        assert pipe is not None
        pipe.close()
    orphans = cluster.jobs()
    assert len(orphans) == NODES, "4 runs in flight in the dead driver's jobs"
    (work / "hold").unlink()
    resumed = _driver(work, env, "d")
    counts = _finish(resumed)
    assert counts["ok"] == 16
    _every_run_once(work, "d", 16, cluster.nodes)
    for j in orphans:  # the resume cancelled them before measuring their runs again
        assert _state(cluster, j) == "CANCELLED"
    _no_jobs_left(cluster)


def test_shared_nodes_are_warned_about_nobody_is_refused_and_the_controller_restarted(
    work: Path, cluster: SlurmCluster
) -> None:
    """Not exclusive: 4 one-CPU jobs pack 2 per node; analyze names runs that overlapped
    on one node. Meanwhile the interchange listens on the bridge only, and uid nobody's
    pickle sent to it runs nowhere (encrypted, as on one machine). And slurmctld, stopped for
    3 s with the held runs released meanwhile (the workers go on without it), then
    restarted, does not stop the campaign: nothing lost, every run stored once."""
    write_config(work / "shared.py", cluster.addr, cluster.partition, NODES, exclusive=False)
    env = cli_env(work, cluster.env())
    _create(work, env, "s", "sleep 1; ./score.sh", reps=2)
    driver = _driver(work, env, "s", "shared.py")
    held = _hold(work)  # 4 runs in flight
    assert len(set(held)) < NODES and len(set(_running(cluster).values())) < NODES, held
    # the driver's own channels to its interchange are on loopback; the workers' on the bridge
    socks = [s for s in _listening() if s[2] == driver.pid or s[2] in _tree(driver.pid)]
    socks = [s for s in socks if s[0] != "127.0.0.1"]
    assert socks and {s[0] for s in socks} == {cluster.addr}, socks
    proof = work / "proof"
    as_nobody(
        f"PROOF={str(proof)!r}\nPORTS={[s[1] for s in socks]!r}\nADDR={cluster.addr!r}\n" + ATTACK,
        preimport=("zmq", "pickle", "time"),
    )
    cluster.stop_controller()
    (work / "hold").unlink()
    time.sleep(3)
    during = len(_seqs(work / "s.db", "s"))
    cluster.start_controller()
    _finish(driver)
    assert not proof.exists(), "uid nobody's pickle ran"
    _every_run_once(work, "s", 16, cluster.nodes)
    assert _lost(work, "s") == []
    print(f"\n{during} of 16 runs stored by the end of the controller's 3 s away")
    shared, said = _shared_hosts(work, env, "s")
    assert "on the same node (exclusive nodes not honoured)" in said, said
    assert shared["pairs"] and {p["kind"] for p in shared["pairs"]} == {"same_node"}
    assert all(p["nodes"][0] == p["nodes"][1] for p in shared["pairs"]), shared
    assert shared["warning"] in said
    _no_jobs_left(cluster)


def _listening(ns: str | None = None) -> list[tuple[str, int, int]]:
    """Listening TCP sockets (address, port, pid) of this host's or namespace ``ns``'s
    network (``ss``: psutil reads this process's network namespace only)."""
    argv = ["ss", "-Hltnp"] if ns is None else ["ip", "netns", "exec", ns, "ss", "-Hltnp"]
    out = subprocess.run(argv, capture_output=True, text=True, timeout=30).stdout
    found = []
    for line in out.splitlines():
        local = line.split()[3]
        addr, _, port = local.rpartition(":")
        addr = addr.strip("[]").removeprefix("::ffff:")
        found += [(addr, int(port), int(pid)) for pid in re.findall(r"pid=(\d+)", line)]
    return found


def _tree(pid: int) -> list[int]:
    try:
        return [p.pid for p in psutil.Process(pid).children(recursive=True)]
    except psutil.Error:
        return []


ATTACK = """
class Proof:
    def __reduce__(self):
        return (os.system, (f"touch {PROOF}",))
ctx = zmq.Context()
for port in PORTS:
    s = ctx.socket(zmq.DEALER)
    s.setsockopt(zmq.LINGER, 0)
    s.connect(f"tcp://{ADDR}:{port}")
    s.send(pickle.dumps({"type": "registration", "x": Proof()}))
    s.send_multipart([b"", pickle.dumps(Proof())])
time.sleep(2)
report(sent=len(PORTS))
"""


def test_the_daemons_listen_on_the_bridge_and_nobody_cannot_submit(
    cluster: SlurmCluster,
) -> None:
    ctld = [s for s in _listening() if s[2] == cluster.procs["slurmctld"].pid]
    assert ctld and {s[0] for s in ctld} == {cluster.addr}, ctld
    for i, (node, addr) in enumerate(zip(cluster.nodes, cluster.node_addrs, strict=True)):
        pid = cluster.procs[f"slurmd-{node}"].pid
        socks = [s for s in _listening(netns.ns_name(os.getpid(), i + 1)) if s[2] == pid]
        assert socks and {s[0] for s in socks} == {addr}, socks
    key = cluster.root / "munge" / "munge.key"
    assert key.stat().st_mode & 0o777 == 0o600 and key.stat().st_uid == 0
    out = as_nobody(
        f"CONF = {cluster.conf.read_text()!r}\n"
        """
import subprocess, tempfile
fd, path = tempfile.mkstemp(suffix=".conf")
os.write(fd, CONF.encode()); os.close(fd)
env = {"SLURM_CONF": path, "PATH": "/usr/bin:/bin:/usr/sbin"}
runs = [subprocess.run(argv, capture_output=True, text=True, env=env, timeout=30)
        for argv in (["squeue", "-h"], ["sbatch", "--wrap", "touch /tmp/pwned-by-nobody"])]
report(codes=[r.returncode for r in runs], said=[r.stderr[-200:] for r in runs])
""",
        preimport=("subprocess", "tempfile"),
        timeout=90,
    )
    assert all(code != 0 for code in out["codes"]), out
    _no_jobs_left(cluster)
