"""perflab's own directories and files against another local user (uid ``nobody``)."""

from __future__ import annotations

import os
import shutil
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from attacker import as_nobody, needs_root
from conftest import perflab
from perflab.errors import PerflabError
from perflab.files import atomic_write, build_dir, create_private, private_dir


@pytest.fixture
def shared() -> Iterator[Path]:
    """A world-writable sticky directory, like /tmp or a shared scratch folder (pytest's own
    temporary folders are closed to other users)."""
    d = Path(tempfile.mkdtemp(prefix="perflab-shared-"))
    d.chmod(0o1777)
    yield d
    shutil.rmtree(d, ignore_errors=True)


@needs_root
def test_atomic_write_never_follows_a_link_planted_beside_its_target(shared: Path) -> None:
    victim = shared.parent / f"{shared.name}-victim"
    victim.write_text("precious")
    target = shared / "out.json"
    # he plants every name the old scheme could use (.NAME.tmp-PID) as a link to the victim
    as_nobody(
        f"os.symlink({str(victim)!r}, {str(shared)!r} + '/.out.json.tmp-{os.getpid()}')\n"
        "report(ok=True)"
    )
    planted = sorted(p.name for p in shared.iterdir())
    assert planted and all(p.startswith(".out.json.tmp-") for p in planted)
    atomic_write(target, "new")  # the old code wrote through .out.json.tmp-<our pid>
    assert victim.read_text() == "precious"
    assert target.read_text() == "new" and not target.is_symlink()
    victim.unlink()


def test_private_dir_is_0700_and_refuses_what_others_could_change(tmp_path: Path) -> None:
    d = private_dir(tmp_path / "a" / "b")
    assert stat.S_IMODE(d.stat().st_mode) == 0o700
    loose = tmp_path / "loose"
    loose.mkdir(mode=0o777)
    loose.chmod(0o777)
    with pytest.raises(PerflabError, match="writable by other users"):
        private_dir(loose / "runs")
    link = tmp_path / "link"
    link.symlink_to(d)
    with pytest.raises(PerflabError, match="is a symlink"):
        private_dir(link)
    assert private_dir(tmp_path / "absent", create=False) == tmp_path / "absent"
    f = create_private(d / "secret", "x")
    assert stat.S_IMODE(f.stat().st_mode) == 0o600
    with pytest.raises(FileExistsError):
        create_private(d / "secret", "y")


@needs_root
def test_a_home_another_user_planted_is_refused(shared: Path) -> None:
    """He makes `.perflab/` (with a cached venv and its marker) in a shared working folder
    before the user runs there: perflab must not use it."""
    out = as_nobody(
        f"os.makedirs({str(shared)!r} + '/.perflab/venvs/py3.11-x/bin')\n"
        f"open({str(shared)!r} + '/.perflab/venvs/py3.11-x/perflab-venv.json', 'w').write('{{}}')\n"
        "report(ok=True)"
    )
    assert out == {"ok": True}
    r = perflab("run", "--metric", "us_per_task", "--command", "echo 1", cwd=shared)
    assert r.returncode == 2, r.stdout + r.stderr
    last = r.stderr.strip().splitlines()[-1]
    assert last.startswith("perflab: error: directory") and ".perflab" in last
    assert "belongs to uid 65534" in last
    assert not any((shared / ".perflab").rglob("*.db"))


def test_a_built_directory_appears_whole_or_not_at_all(tmp_path: Path) -> None:
    dest = tmp_path / "cache" / "key"
    with pytest.raises(RuntimeError), build_dir(dest) as tmp:
        (tmp / "half").write_text("x")
        raise RuntimeError("the build failed")
    assert not dest.exists() and list(dest.parent.iterdir()) == []
    with build_dir(dest) as tmp:
        assert stat.S_IMODE(tmp.stat().st_mode) == 0o700
        (tmp / "whole").write_text("x")
    assert (dest / ".complete").is_file() and (dest / "whole").read_text() == "x"
    # a second builder of the same key finds it made and keeps the first copy
    with build_dir(dest) as tmp:
        (tmp / "other").write_text("y")
    assert not (dest / "other").exists() and sorted(p.name for p in dest.parent.iterdir()) == [
        "key"
    ]
