"""A diff writes only regular files inside its package's private copy (issue 24)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from conftest import perflab

#: A git diff that makes parsl/evil.py a symlink to a file outside the private copy: `patch`
#: creates the link, and the next write through it lands on the victim.
SYMLINK = """diff --git a/parsl/evil.py b/parsl/evil.py
new file mode 120000
--- /dev/null
+++ b/parsl/evil.py
@@ -0,0 +1 @@
+{victim}
\\ No newline at end of file
"""
#: A path that climbs out of the copy.
CLIMB = """--- a/parsl/version.py
+++ b/parsl/../../escaped.py
@@ -0,0 +1 @@
+owned
"""
#: A legitimate diff whose removed line starts with "--": a hunk body, not a header.
DASHES = """--- a/parsl/version.py
+++ b/parsl/version.py
@@ -1,1 +1,1 @@
--- not a header
+x
"""


def _catalog(tmp_path: Path, diff: str) -> Path:
    (tmp_path / "p.diff").write_text(diff)
    cat = tmp_path / "p.toml"
    cat.write_text('[factor.p]\npatch = { package = "parsl", diff = "p.diff" }\n')
    return cat


@pytest.mark.parametrize(
    ("diff", "said"),
    [(SYMLINK, "mode 120000"), (CLIMB, "outside package parsl")],
    ids=["symlink", "climb"],
)
def test_an_unsafe_patch_is_refused_before_anything_runs(
    tmp_path: Path, diff: str, said: str
) -> None:
    victim = tmp_path / "victim"
    victim.write_text("precious")
    cat = _catalog(tmp_path, diff.format(victim=victim))
    r = perflab("run", "--target", "parsl-threads", "--tasks", "5", "--catalog", str(cat),
                "--treat", "p", "--run-root", str(tmp_path / "runs"), cwd=tmp_path)  # fmt: skip
    assert r.returncode == 2, r.stdout + r.stderr
    last = r.stderr.strip().splitlines()
    assert len(last) == 1 and said in last[0] and "p.diff:" in last[0]
    assert not (tmp_path / "runs").exists() and victim.read_text() == "precious"


def test_gnu_patch_would_create_the_link(tmp_path: Path) -> None:
    """Why the mode line is refused: `patch` itself makes a symlink of it."""
    (tmp_path / "parsl").mkdir()
    (tmp_path / "p.diff").write_text(SYMLINK.format(victim="/etc/hostname"))
    subprocess.run(["patch", "-p1", "--batch", "-d", str(tmp_path), "-i",
                    str(tmp_path / "p.diff")], capture_output=True)  # fmt: skip
    assert (tmp_path / "parsl" / "evil.py").is_symlink()


def test_a_hunk_line_that_starts_with_dashes_is_not_a_header(tmp_path: Path) -> None:
    from perflab.factors.patching import check_headers

    (tmp_path / "p.diff").write_text(DASHES)
    check_headers(tmp_path / "p.diff", "parsl", "test")  # no error
