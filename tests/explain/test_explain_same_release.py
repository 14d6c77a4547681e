"""Explaining a release against itself is bad input, refused before anything is built or
stored: by ``--range A..A``'s parser in the CLI, and by ``explain.inputs.checked`` for the
Python API and the old ``--from``/``--to`` spellings (which ``--range`` does not parse)."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

import perflab.api
import perflab.cli  # noqa: F401  (registers the verbs)
from perflab.cli.app import main
from perflab.errors import PerflabError
from perflab.spec import RunSpec


def test_the_api_refuses_the_same_release_twice_and_stores_nothing(tmp_path: Path) -> None:
    store = tmp_path / "s.db"
    with pytest.raises(PerflabError, match=r"same release twice \(1\.0\): nothing to explain"):
        perflab.api.explain("toy", "1.0", "1.0", RunSpec(command="echo 1"), store=store)
    assert not store.exists()


@pytest.mark.parametrize(
    ("ends", "says"),
    [
        (["--range", "1.0..1.0"], "the two ends are the same"),
        (["--from", "1.0", "--to", "1.0"], "same release twice (1.0)"),
    ],
)
def test_the_cli_refuses_it_in_one_error_line(tmp_path: Path, ends: list[str], says: str) -> None:
    args = ["explain", "--package", "toy", *ends, "--command", "echo 1", "--store",
            str(tmp_path / "s.db")]  # fmt: skip
    res = CliRunner().invoke(main, args, env={"PERFLAB_HOME": str(tmp_path / "home")})
    errors = [ln for ln in res.stderr.splitlines() if ln.startswith("perflab: error: ")]
    assert res.exit_code == 2 and len(errors) == 1 and says in errors[0], res.output
    assert not (tmp_path / "s.db").exists() and not (tmp_path / "home").exists()
