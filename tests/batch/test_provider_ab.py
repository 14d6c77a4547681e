"""The Slurm-vs-Local HTEX comparison's own logic: configs that differ only in the provider,
and its interval arithmetic (the measurement itself is run by hand: docs/slurm.md)."""

from __future__ import annotations

import math
from pathlib import Path

from scipy import stats

from perflab.batch.provider_ab import t_interval, write_configs
from perflab.engines.parsl_common import load_config_file


def test_the_two_configs_differ_only_in_the_provider(tmp_path: Path) -> None:
    paths = write_configs(tmp_path, "part1", 3)
    local, slurm = (paths[k].read_text().splitlines() for k in ("local", "slurm"))
    differ = [(a, b) for a, b in zip(local, slurm, strict=True) if a != b]
    assert len(differ) == 1
    assert "LocalProvider(" in differ[0][0] and "SlurmProvider(partition='part1'" in differ[0][1]
    config = load_config_file(str(paths["local"]))
    assert config.executors[0].max_workers_per_node == 3
    assert oct(paths["slurm"].stat().st_mode & 0o777) == "0o600"


def test_t_interval_matches_scipy() -> None:
    values = [1.0, 2.0, 4.0, 3.5]
    mean, lo, hi = t_interval(values)
    want = stats.t.interval(0.95, 3, loc=2.625, scale=stats.sem(values))
    assert math.isclose(mean, 2.625) and math.isclose(lo, want[0]) and math.isclose(hi, want[1])
    assert math.isnan(t_interval([1.0])[1])
