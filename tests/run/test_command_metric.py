"""A command's metric (issue 51): without ``--metric`` perflab measures the command itself
(wall time, CPU, peak RSS) and reads nothing it prints; a printed number is read only as the
metric ``--metric`` names, in that metric's unit, and the record says which was taken."""

from __future__ import annotations

from pathlib import Path

from conftest import perflab, perflab_json
from perflab import RunSpec, measure
from perflab.cli.compare import gate_metric
from perflab.spec import default_metric


def test_by_default_the_command_is_measured_and_its_print_not_read(run_root: str) -> None:
    rec = measure(RunSpec(command="echo 62.9", run_root=run_root))
    assert rec.status == "ok", rec.error
    assert rec.us_per_task is None and rec.tasks_per_s is None  # not 62.9 µs/task
    assert rec.wall_s and rec.wall_s > 0 and rec.peak_rss_bytes and rec.cpu_user_s is not None
    assert rec.wall_s == rec.measurement["command_wall_s"]
    assert rec.measurement["score_from"].startswith("wall_s, measured by perflab")


def test_a_named_metric_is_read_in_its_own_unit(run_root: str) -> None:
    rec = measure(RunSpec(command="echo 62.9", metric="us_per_task", run_root=run_root))
    assert rec.us_per_task == 62.9 and abs(rec.tasks_per_s - 1e6 / 62.9) < 1e-6
    assert rec.measurement["score_from"].startswith("us_per_task, read from")
    rec = measure(RunSpec(command="echo 2.5", metric="wall_s", run_root=run_root))
    assert rec.wall_s == 2.5 and rec.us_per_task is None  # seconds, as wall_s is
    assert rec.measurement["command_wall_s"] < 2.5


def test_every_verb_defaults_a_command_to_wall_s() -> None:
    assert default_metric("true") == "wall_s" and default_metric(None) == "us_per_task"
    assert RunSpec(command="true").metric == "wall_s" and RunSpec().metric == "us_per_task"
    o = {"metric": None, "command": "true", "side_command_a": None, "side_command_b": None}
    assert gate_metric(o) == "wall_s"  # compare and bisect
    assert gate_metric({**o, "command": None}) == "us_per_task"
    assert gate_metric({**o, "metric": "us_per_task"}) == "us_per_task"
    # an older stored spec (a campaign's base) that named us_per_task still reads its print
    old = RunSpec.from_dict({"command": "echo 1", "metric": "us_per_task"})
    assert old.score_line and not RunSpec(command="echo 1").score_line


def test_the_cli_says_which_was_taken(tmp_path: Path) -> None:
    env = {"PERFLAB_HOME": str(tmp_path / ".perflab")}
    r = perflab("run", "--command", "echo 62.9", "--run-root", "r", cwd=tmp_path, env=env)
    assert r.returncode == 0, r.stderr
    assert "score: wall_s, measured by perflab" in " ".join(r.stdout.split())
    rec = perflab_json("run", "--command", "echo 62.9", "--metric", "us_per_task",
                       "--run-root", "r", cwd=tmp_path, env=env)  # fmt: skip
    assert rec["us_per_task"] == 62.9 and "read from" in rec["measurement"]["score_from"]
