"""The CLI's contract: one JSON object with --json, one clear error and exit 2 on bad input."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import perflab, perflab_json


def _bad(*args: str) -> str:
    proc = perflab(*args)
    assert proc.returncode == 2, (proc.returncode, proc.stdout, proc.stderr)
    err = proc.stderr.strip().splitlines()
    assert len(err) == 1, proc.stderr
    assert err[0].startswith("perflab: error:")
    return err[0]


def test_unknown_engine() -> None:
    assert "unknown engine 'nope'" in _bad("run", "--target", "nope", "--tasks", "1")


def test_unknown_workload() -> None:
    assert "unknown workload 'zzz'" in _bad("run", "--target", "cf-threads", "-w", "zzz", "-n", "1")


def test_tasks_zero() -> None:
    assert "--tasks must be at least 1" in _bad("run", "--target", "cf-threads", "--tasks", "0")


def test_unknown_workload_parameter() -> None:
    assert "no parameter" in _bad("run", "-t", "cf-threads", "-n", "1", "--param", "zz=1")


def test_unknown_engine_option() -> None:
    assert "has no option" in _bad("run", "-t", "cf-threads", "-n", "1", "--opt", "zz=1")


def test_parsl_config_that_raises_names_file_and_line(tmp_path: Path) -> None:
    cfg = tmp_path / "cfg.py"
    cfg.write_text("x = 1\nraise ValueError('broken config')\n")
    msg = _bad("run", "--engine-config", str(cfg), "--tasks", "1")
    assert f"{cfg}:2" in msg and "broken config" in msg


def test_parsl_config_without_config(tmp_path: Path) -> None:
    cfg = tmp_path / "cfg.py"
    cfg.write_text("y = 2\n")
    assert "neither `config` nor `fresh_config()`" in _bad(
        "run", "--engine-config", str(cfg), "-n", "1"
    )


def test_parsl_config_for_non_parsl_engine(tmp_path: Path) -> None:
    cfg = tmp_path / "cfg.py"
    cfg.write_text("config = None\n")
    assert "only to Parsl" in _bad(
        "run", "-t", "cf-threads", "--engine-config", str(cfg), "-n", "1"
    )


@pytest.mark.parametrize(
    ("command", "fragment"),
    [
        ("true", "printed nothing"),
        ("echo fast", "neither a number"),
        ("echo '{\"x\": 1}'", "without"),
    ],
)
def test_command_without_usable_score(command: str, fragment: str, tmp_path: Path) -> None:
    proc = perflab(
        "run", "--metric", "us_per_task", "--command", command, "--run-root", str(tmp_path)
    )
    assert proc.returncode == 2
    assert fragment in proc.stderr


def test_command_json_output(tmp_path: Path) -> None:
    rec = perflab_json(
        "run", "--metric", "us_per_task", "--command", "echo 250", "--run-root", str(tmp_path)
    )
    assert rec["status"] == "ok" and rec["us_per_task"] == 250 and rec["tasks_per_s"] == 4000


def test_repeat_reports_median_and_cv(tmp_path: Path) -> None:
    out = perflab_json(
        "run",
        "--metric",
        "us_per_task",
        "--command",
        "echo $((RANDOM % 50 + 100))",
        "--repeat",
        "3",
        "--run-root",
        str(tmp_path),
    )
    assert len(out["runs"]) == 3
    values = sorted(r["us_per_task"] for r in out["runs"])
    assert out["summary"]["median"] == values[1]
    assert out["summary"]["cv"] >= 0


def test_human_table(tmp_path: Path) -> None:
    proc = perflab("run", "--target", "cf-threads", "--tasks", "100", "--run-root", str(tmp_path))
    assert proc.returncode == 0, proc.stderr
    assert "µs/task" in proc.stdout and "utilisation" in proc.stdout


@pytest.mark.parametrize("verb", ["analyze", "report"])
def test_a_higher_is_better_metric_is_refused_not_read_as_a_cost(verb: str, tmp_path: Path) -> None:
    """The analysis's best set is its smallest mean: read as a cost, tasks/s would name the
    slowest set best. Refused, naming the reciprocal to use instead."""
    csv = tmp_path / "d.csv"
    rows = [(0, 100), (1, 50), (0, 101), (1, 51), (0, 99), (1, 49)]
    csv.write_text("timestamp,a,us_per_task,tasks_per_s\n" + "".join(
        f"{i},{a},{us},{1e6 / us}\n" for i, (a, us) in enumerate(rows)))  # fmt: skip
    err = _bad(verb, str(csv), "--metric", "tasks_per_s")
    assert "--metric tasks_per_s" in err and "higher-is-better" in err and "us_per_task" in err
    assert perflab(verb, str(csv)).returncode == 0  # the cost itself is analysed
