"""The workload zoo on real engines: DAG patterns through each engine's own dependency
mechanism, ideal time and efficiency, and memory/io costs in the run record."""

from __future__ import annotations

from pathlib import Path

import psutil
import pytest

from perflab import PerflabError, RunSpec, measure
from perflab.engines.cf import ThreadsEngine
from perflab.run.measure import validate

pytestmark = pytest.mark.slow


def _run(target: str, workload: str, tasks: int, run_root: str, **params: object):
    spec = RunSpec(
        target=target,
        workload=workload,
        tasks=tasks,
        warmup=2,
        params=dict(params),
        engine_options={"workers": 2},
        run_root=run_root,
        timeout_s=120,
    )
    rec = measure(spec)
    assert rec.status == "ok", rec.error
    return rec


@pytest.mark.parametrize(
    "target", ["cf-threads", "cf-processes", "parsl-threads", "dask", "parsl-htex"]
)
def test_a_chain_runs_in_order_on_every_engine(target: str, run_root: str) -> None:
    rec = _run(target, "chain", 12, run_root)
    d = rec.measurement["workload"]
    # each task returned 1 + its input's value: the sink's value 12 was checked in the child
    assert (rec.tasks, d["depth"], d["pattern"]) == (12, 12, "chain")
    assert rec.measurement["ideal_s"] == 0.0 and rec.measurement["efficiency"] == 0.0
    assert d["latency_per_level_s"] == pytest.approx(rec.wall_s / 12)


@pytest.mark.parametrize(
    ("workload", "tasks", "depth"),
    [("fan", 20, 3), ("tree", 15, 4), ("stencil_1d", 12, 6)],
)
def test_patterns_report_their_shape_and_ideal(
    workload: str, tasks: int, depth: int, run_root: str
) -> None:
    rec = _run("cf-processes", workload, tasks, run_root, task_us=2000.0)
    d = rec.measurement["workload"]
    assert d["depth"] == depth
    work = rec.tasks * 2000e-6
    ideal = rec.measurement["ideal_s"]
    assert ideal == pytest.approx(max(work / d["slots"], depth * 2000e-6), rel=0.01)
    assert rec.measurement["efficiency"] == pytest.approx(ideal / rec.wall_s)
    assert d["critical_path_s"] == pytest.approx(depth * 2000e-6, rel=0.01)


def test_compute_and_imbalanced_have_an_ideal_from_the_calibrated_kernel(run_root: str) -> None:
    rec = _run("cf-processes", "compute", 20, run_root, task_us=1000.0)
    assert rec.measurement["ideal_s"] == pytest.approx(20 * 1e-3 / 2, rel=0.01)
    assert rec.measurement["efficiency"] > 0
    rec = _run("cf-threads", "imbalanced", 30, run_root, task_us=500.0, cv=2.0)
    d = rec.measurement["workload"]
    assert d["task_us_max"] > 1.5 * d["task_us_mean"]  # a heavy tail was drawn
    assert rec.measurement["ideal_s"] >= d["task_us_max"] * 1e-6


def _on_tmpfs(path: str) -> bool:
    parts = [p for p in psutil.disk_partitions(all=True) if path.startswith(p.mountpoint)]
    return bool(parts) and max(parts, key=lambda p: len(p.mountpoint)).fstype == "tmpfs"


def test_memory_and_io_show_their_cost_in_the_record(run_root: str) -> None:
    small = _run("cf-processes", "memory", 2, run_root, mb=0)
    # each task holds its 96 MiB for a second, so the tree's sampled peak sees at least one
    # worker's whole 96 MiB even on a loaded machine (a task that frees at once may be
    # sampled half-touched; two workers at the same moment is timing-dependent)
    big = _run("cf-processes", "memory", 4, run_root, mb=96, hold_ms=1000.0)
    assert big.peak_rss_bytes - small.peak_rss_bytes > 64 * 2**20
    rec = _run("cf-processes", "io", 10, run_root, kib=1024, chunk=65536)
    assert rec.measurement["workload"]["bytes_written_by_tasks"] == 10 << 20
    if not _on_tmpfs(run_root):  # the kernel does not count page-cache writes to tmpfs
        assert rec.write_bytes >= 10 << 20


def test_an_engine_without_dependencies_is_refused_before_running(
    monkeypatch: pytest.MonkeyPatch, run_root: str
) -> None:
    monkeypatch.setattr(ThreadsEngine, "dependencies", None)
    spec = RunSpec(target="cf-threads", workload="fan", tasks=10, run_root=run_root)
    with pytest.raises(PerflabError, match="needs task dependencies, which engine 'cf-threads'"):
        validate(spec)
    assert not Path(run_root).exists()
