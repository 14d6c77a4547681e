"""A new user's path, run: the README's tour and each persona's guide page, as they are
written. Every fenced ``bash`` block right after a ``<!-- run -->`` line is taken from the
page (so the page cannot drift from what works) and run with bash, block after block, in a
fresh folder with a fresh ``PERFLAB_HOME``, the checkout's ``perflab`` first on ``PATH``.

To stay short (the README's tour makes 18 engine runs, the three guides about 20) the runs
are shrunk by the substitutions in ``SHRINK``, which the README and docs/guide/index.md
name: sizes only, never an option's name, so a renamed or refused option fails here as it
would for a reader. Blocks without the mark (the long runs, commands that need a network or a
clone) are only parsed (tests/test_docs_pages.py). Any command that exits non-zero fails its
block (``set -e``), ``compare``'s exit 1 ("B is slower") too: the pages' run blocks compare
changes that help (``cfg_noop_logging`` on HTEX, a source change that drops log calls)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT

MARK = "<!-- run -->"
# what a page says -> what the test runs (a page's sizes, shrunk)
SHRINK = {
    "--time 5": "--time 1",
    "--tasks 5000": "--tasks 200",
    "--tasks 2000": "--tasks 200",
    "--runs 3": "--runs 2",
}
GUIDES = ["docs/guide/tuning.md", "docs/guide/slowdown.md", "docs/guide/own-program.md"]


def run_blocks(text: str) -> list[str]:
    """The bash blocks of a page that come right after a ``<!-- run -->`` line."""
    return re.findall(rf"^{re.escape(MARK)}\n```bash\n(.*?)^```", text, re.S | re.M)


def shrink(block: str) -> str:
    """The block with its sizes replaced by ``SHRINK``'s, whole words only."""
    for big, small in SHRINK.items():
        block = re.sub(rf"{re.escape(big)}(?![\w.])", small, block)
    return block


def test_run_blocks_are_found_and_shrunk_as_documented() -> None:
    page = f"x\n{MARK}\n```bash\nperflab run --time 5 --tasks 50000\n```\n```bash\nno\n```\n"
    blocks = run_blocks(page)
    assert blocks == ["perflab run --time 5 --tasks 50000\n"]
    assert shrink(blocks[0]) == "perflab run --time 1 --tasks 50000\n"  # 50000 is not 5000
    readme = (ROOT / "README.md").read_text()
    assert run_blocks(readme), "the README's tour is not marked to run"
    for big, small in SHRINK.items():  # the substitutions are the ones the pages name
        if big in "".join(run_blocks(readme)):
            assert f"`{small}`" in readme, small
    assert all(run_blocks((ROOT / g).read_text()) for g in GUIDES)


def _run_page(page: str, tmp_path: Path, timeout: float) -> None:
    """Run the page's marked blocks in order; ``timeout`` (per block) only stops a hung
    block, generous for a loaded machine: nothing here bounds speed."""
    home = tmp_path / "home"
    work = tmp_path / "work"
    work.mkdir()
    bindir = str(Path(sys.executable).parent)
    env = {
        **os.environ,
        "PERFLAB_HOME": str(home),
        "PYTHONPATH": str(ROOT / "src"),
        "PATH": f"{bindir}:{os.environ.get('PATH', '')}",
        "NO_COLOR": "1",
        "COLUMNS": "80",
    }
    blocks = run_blocks((ROOT / page).read_text())
    assert blocks, page
    for i, block in enumerate(blocks):
        script = "set -euo pipefail\n" + shrink(block)
        proc = subprocess.run(
            ["bash", "-c", script], cwd=work, env=env, capture_output=True, text=True,
            timeout=timeout,
        )  # fmt: skip
        assert proc.returncode == 0, (
            f"{page}, run block {i + 1} exited {proc.returncode}:\n{block}\n"
            f"stderr:\n{proc.stderr[-3000:]}\nstdout:\n{proc.stdout[-1500:]}"
        )


@pytest.mark.slow
def test_the_readmes_tour_runs(tmp_path: Path) -> None:
    """The README's tour, from a fresh folder: measure, treat, campaign (create, run, status),
    analyse, report, export and analyse the export."""
    _run_page("README.md", tmp_path, timeout=1200)
    report = tmp_path / "work" / "report" / "report.html"
    assert report.exists() and report.stat().st_size > 0
    csv = (tmp_path / "work" / "c1.csv").read_text().splitlines()
    assert len(csv) == 1 + 8 * 2  # a header and 8 sets x 2 runs (--runs 3 shrunk to 2)


@pytest.mark.slow
@pytest.mark.parametrize("page", GUIDES)
def test_a_personas_guide_runs(page: str, tmp_path: Path) -> None:
    _run_page(page, tmp_path, timeout=900)
