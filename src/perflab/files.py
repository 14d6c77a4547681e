"""Small shared helpers for files and names, so each rule has one owner."""

from __future__ import annotations

import json
import os
import re
import shutil
import stat
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from perflab.errors import PerflabError

#: Names of campaigns, factors and CSV columns: letters, digits, ``_ . -``, not a digit first.
NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_.-]*$")
#: Campaign names become file names (exports, reports): keep them well within NAME_MAX.
MAX_NAME = 100


def perflab_home() -> Path:
    """perflab's working folder: run directories, patched package copies, the store."""
    return Path(os.environ.get("PERFLAB_HOME", ".perflab")).resolve()


def home_dir(*parts: str) -> Path:
    """A folder inside perflab's home (the home itself with no ``parts``), made private."""
    private_dir(perflab_home())
    return private_dir(perflab_home().joinpath(*parts)) if parts else perflab_home()


def output_dir(path: str | Path, what: str) -> Path:
    """The folder a verb writes its files into, made with its parents; a PerflabError naming
    the option when it cannot be (a file of that name, no permission)."""
    out = Path(path)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise PerflabError(f"{what} {path}: cannot make this folder: {exc.strerror}") from None
    return out


def private_dir(path: str | Path, create: bool = True) -> Path:
    """``path`` created 0700 (or checked, if it exists) and resolved; a PerflabError naming
    it if another local user could put his own files in it. It must be this user's and no
    symlink; each directory above it root's or this user's and writable by no one else,
    unless sticky (/tmp, /dev/shm) with the next one down this user's or root's.
    ``create=False`` only checks (a path that does not exist yet passes)."""
    path = Path(path)
    uid = os.geteuid()
    if not create and not os.path.lexists(path):
        return path
    try:
        path.mkdir(mode=0o700, parents=True, exist_ok=True)
        st = path.lstat()
    except OSError as exc:
        raise PerflabError(f"directory {path}: {exc.strerror}") from None
    if stat.S_ISLNK(st.st_mode) or not stat.S_ISDIR(st.st_mode) or st.st_uid != uid:
        raise PerflabError(
            f"directory {path} is not this user's own (uid {uid}): it "
            f"{'is a symlink' if stat.S_ISLNK(st.st_mode) else f'belongs to uid {st.st_uid}'}; "
            "refusing it "
            "(another user may have planted it; set PERFLAB_HOME or --run-root elsewhere)"
        )
    if st.st_mode & 0o077:
        os.chmod(path, 0o700)  # ours: nobody else needs to read runs, keys or environments
    path = path.resolve()
    child, child_uid = path, uid
    for parent in path.parents:
        pst = parent.stat()
        if pst.st_uid not in (0, uid):
            raise PerflabError(
                f"directory {path}: {parent} above it belongs to uid {pst.st_uid}, who could "
                "replace it: refusing it (set PERFLAB_HOME or --run-root elsewhere)"
            )
        sticky_ok = pst.st_mode & stat.S_ISVTX and child_uid in (0, uid)
        if pst.st_mode & 0o022 and not sticky_ok:
            raise PerflabError(
                f"directory {path}: {parent} above it is writable by other users, who could "
                f"replace {child}: refusing it (set PERFLAB_HOME or --run-root elsewhere)"
            )
        child, child_uid = parent, pst.st_uid
    return path


def _umask() -> int:
    mask = os.umask(0o077)
    os.umask(mask)
    return mask


def create_private(path: str | Path, data: str | bytes) -> Path:
    """Write a new file readable by this user only, never through a planted link: O_CREAT |
    O_EXCL | O_NOFOLLOW, 0600."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(data.encode() if isinstance(data, str) else data)
    return Path(path)


def check_name(name: str, what: str) -> str:
    """``name`` if it is a valid name for ``what``, else a PerflabError saying why."""
    if not NAME_RE.match(name):
        raise PerflabError(f"{what} {name!r}: use letters, digits, _ . - (not a digit first)")
    if len(name) > MAX_NAME:
        raise PerflabError(f"{what} {name[:20]!r}…: longer than {MAX_NAME} characters")
    return name


def atomic_write(path: str | Path, data: str | bytes | Callable[[Path], None]) -> Path:
    """Write ``path`` so a reader sees the old file or the whole new one, never a part.

    ``data`` is the content, or a function that writes a given temporary path.
    """
    path = Path(path)
    # mkstemp: an unguessable name, created O_EXCL (a link planted under a predictable name
    # would have overwritten whatever it pointed at)
    fd, name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    tmp = Path(name)
    try:
        with os.fdopen(fd, "wb") as f:
            if not callable(data):
                f.write(data if isinstance(data, bytes) else data.encode())
        if callable(data):
            data(tmp)
        # the mode a plain open() would have given (mkstemp's is 0600); what must stay
        # private lives in perflab's 0700 directories
        os.chmod(tmp, 0o666 & ~_umask())
        tmp.replace(path)
    finally:
        tmp.unlink(missing_ok=True)
    return path


def read_keyed(path: Path, what: str) -> dict[str, Any]:
    """A JSON file of entries by key ({} when there is none yet); one that is not JSON is
    bad input the user removes (``what`` names it: "calibration store")."""
    if not path.is_file():
        return {}
    try:
        data = json.loads(path.read_text())
    except ValueError:
        raise PerflabError(f"{what} {path}: not valid JSON; remove it") from None
    return data if isinstance(data, dict) else {}


def write_keyed(path: Path, key: str, entry: Any, what: str) -> Path:
    """``path``'s entries (``read_keyed``) with ``entry`` stored under ``key``, written whole."""
    data = read_keyed(path, what)
    data[key] = entry
    return atomic_write(path, json.dumps(data, indent=1))


@contextmanager
def build_dir(dest: Path) -> Iterator[Path]:
    """A fresh private directory to fill, which becomes ``dest`` (marked ``.complete``) when
    the block ends; on an error it is removed and ``dest`` is untouched.

    Caches built this way are read only once ``dest/.complete`` exists, so a reader never
    sees half a copy; when two runs build the same ``dest`` at once, the first to finish
    wins and the other's copy is dropped.
    """
    dest.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    # mkdtemp: 0700 and an unguessable name, so nothing planted beside dest is reused
    tmp = Path(tempfile.mkdtemp(prefix=f".{dest.name}.", suffix=".tmp", dir=dest.parent))
    try:
        yield tmp
        (tmp / ".complete").touch()
        try:
            tmp.rename(dest)
        except OSError:  # another run made it first
            shutil.rmtree(tmp, ignore_errors=True)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
