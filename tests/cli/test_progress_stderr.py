"""A verb's progress goes to stderr through ``cli.app.progress``, with or without ``--json``:
stdout keeps only the answer (one JSON object with ``--json``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from perflab.cli import main


@pytest.mark.parametrize("as_json", [True, False])
def test_run_says_each_run_on_stderr_also_with_json(as_json: bool, tmp_path: Path) -> None:
    args = [
        "run",
        "--metric",
        "us_per_task",
        "--command",
        "echo 7",
        "--runs",
        "2",
        *(["--json"] if as_json else []),
    ]
    res = CliRunner().invoke(main, args, env={"PERFLAB_HOME": str(tmp_path / "home")})
    assert res.exit_code == 0, res.output
    assert "run 1/2 …" in res.stderr and "run 2/2 …" in res.stderr, res.stderr
    assert "run 1/2" not in res.stdout
    if as_json:
        json.loads(res.stdout)  # exactly one JSON object on stdout
