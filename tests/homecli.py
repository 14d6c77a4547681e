"""The CLI driven in-process against a perflab home of a test's own: what the verbs' tests
over a ``--command`` campaign share."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner, Result

import perflab.cli  # noqa: F401  (registers the verbs)
from perflab.cli.app import main


def cli(home: Path, *args: str) -> Result:
    """``perflab ARGS`` with ``PERFLAB_HOME`` at ``home``."""
    return CliRunner().invoke(main, list(args), env={"PERFLAB_HOME": str(home)})


def last_json(res: Result) -> dict:
    """The JSON a verb printed last (a warning may come before it); the verb exited 0."""
    assert res.exit_code == 0, res.output
    out: dict = json.loads(res.output.strip().splitlines()[-1])
    return out


def cycling_score(value: str) -> str:
    """A command's script printing ``value``, an expression of ``t`` (the set's treatments)
    and ``n`` (how many runs printed before, counted in a file beside the script): a spread
    that repeats the same way every time, where a random one could draw two close values."""
    return (
        "import os\n"
        "t = set(filter(None, os.environ['PERFLAB_TREATMENTS'].split(',')))\n"
        "p = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'n')\n"
        "n = int(open(p).read()) if os.path.exists(p) else 0\n"
        "open(p, 'w').write(str(n + 1))\n"
        f"print({value})\n"
    )


def command_campaign(
    home: Path, score: str, factors: str, runs: int, python: str = "python3 -S", *more: str
) -> str:
    """``campaign create p`` of a full factorial over ``factors`` whose command is the
    ``score`` script (written to ``home``), ``runs`` a set, in ``home/s.db``: its path.
    ``more``: more options of ``campaign create`` (e.g. ``--fastest``)."""
    (home / "score.py").write_text(score)
    db = str(home / "s.db")
    res = cli(home, "campaign", "create", "p", "--command", f"{python} {home / 'score.py'}",
              "--metric", "us_per_task",
              "--factors", factors, "--design", "full", "--runs", str(runs), "--seed", "1",
              "--store", db, *more)  # fmt: skip
    assert res.exit_code == 0, res.output
    return db
