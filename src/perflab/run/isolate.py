"""``--isolate``: the measured process tree in a cgroup of its own, with a higher CPU weight
and, with ``cpus=LIST``, its own cpuset.

Where: a unified (v2) hierarchy whose ``cpu`` controller is available (under
``$PERFLAB_CGROUP``, a delegated cgroup, or the root as root), else the v1 ``cpu`` (and
``cpuset``) hierarchies of a hybrid mount, as root. The cgroup is made per run
(``perflab-<pid>-<run id>``), the measured main process joins it between fork and exec (so
every process it starts is in it from its first instruction), the supervisor reads back
``/proc/PID/cgroup`` of it as proof, and removes the cgroup once the tree is gone — also when
perflab is killed (the supervisor outlives it). A cgroup left by a killed supervisor is swept
by the next run that isolates (its owner's pid is gone).
"""

from __future__ import annotations

import contextlib
import os
import re
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from perflab.errors import PerflabError

ROOT = Path("/sys/fs/cgroup")
#: A delegated cgroup (v2) perflab may make its cgroups under, for a user without root.
DELEGATED_ENV = "PERFLAB_CGROUP"
#: v2 ``cpu.weight`` of the measured tree (the default is 100): ten times everything else.
CPU_WEIGHT = 1000
#: v1 ``cpu.shares`` to the same effect (the default is 1024).
CPU_SHARES = 10 * 1024
PREFIX = "perflab-"
_STALE = re.compile(rf"{PREFIX}(\d+)-[0-9a-f]+$")


@dataclass(frozen=True)
class Isolation:
    """Where a run's cgroups are: one directory per hierarchy (v2: one), the weight and the
    cpus they were given."""

    version: int
    dirs: tuple[str, ...]
    cpu_weight: int
    cpus: str | None

    def to_job(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_job(cls, d: dict[str, Any]) -> Isolation:
        return cls(int(d["version"]), tuple(d["dirs"]), int(d["cpu_weight"]), d.get("cpus"))


def parse(setting: str) -> str | None:
    """``--isolate`` (``on``) or ``--isolate cpus=0-1`` → the cpus (None: weight only); bad
    input names the option."""
    text = setting.strip()
    if text in ("", "on", "weight"):
        return None
    m = re.fullmatch(r"cpus=([0-9]+(?:-[0-9]+)?(?:,[0-9]+(?:-[0-9]+)?)*)", text)
    if not m:
        raise PerflabError(f"--isolate: {setting!r} is not 'on' or cpus=LIST such as cpus=0-1")
    cpus = m.group(1)
    known = os.sched_getaffinity(0)
    for part in cpus.split(","):
        lo, _, hi = part.partition("-")
        if int(hi or lo) < int(lo) or not set(range(int(lo), int(hi or lo) + 1)) <= known:
            raise PerflabError(f"--isolate cpus={cpus}: not among this process's cpus "
                               f"{sorted(known)}")  # fmt: skip
    return cpus


def _v2_base() -> Path | None:
    """The v2 directory perflab may make cgroups in, or None: ``$PERFLAB_CGROUP`` if set,
    else the root of a unified mount."""
    given = os.environ.get(DELEGATED_ENV)
    if given:
        return Path(given)
    return ROOT if (ROOT / "cgroup.controllers").exists() else None


def backend(cpus: str | None) -> tuple[int, list[Path]]:
    """(cgroup version, the directories to make a run's cgroups in) where perflab has the
    rights; else bad input saying in one line why not (nothing is run)."""
    base = _v2_base()
    if base is not None:
        controllers = _read(base / "cgroup.controllers").split()
        need = ["cpu", *(["cpuset"] if cpus else [])]
        missing = [c for c in need if c not in controllers]
        if missing:
            raise PerflabError(f"--isolate: the cgroup {base} has no {', '.join(missing)} "
                               "controller (delegate it, or set PERFLAB_CGROUP)")  # fmt: skip
        _writable(base)
        return 2, [base]
    dirs = [ROOT / "cpu", *([ROOT / "cpuset"] if cpus else [])]
    for d in dirs:
        if not (d / "cgroup.procs").exists():
            raise PerflabError(f"--isolate: no cgroup v2 with a cpu controller and no v1 {d.name} "
                               f"hierarchy at {d}")  # fmt: skip
        _writable(d)
    return 1, dirs


def _writable(d: Path) -> None:
    if not os.access(d, os.W_OK):
        who = "root" if os.geteuid() == 0 else f"uid {os.geteuid()}"
        raise PerflabError(f"--isolate: {who} may not make cgroups in {d} (run as root, or "
                           f"give a delegated cgroup in {DELEGATED_ENV})")  # fmt: skip


def check(setting: str) -> None:
    """Bad input (one line, exit 2, nothing run) unless ``--isolate setting`` can be done."""
    backend(parse(setting))


def make(setting: str, run_id: str) -> Isolation:
    """Make the run's cgroup(s): ``perflab-<pid>-<run id>`` with the weight (and cpuset)."""
    cpus = parse(setting)
    version, bases = backend(cpus)
    sweep(bases)
    name = f"{PREFIX}{os.getpid()}-{run_id}"
    made: list[Path] = []
    try:
        for base in bases:
            d = base / name
            d.mkdir(mode=0o755)
            made.append(d)
            _configure(version, base, d, cpus)
    except OSError as exc:
        remove(Isolation(version, tuple(map(str, made)), 0, cpus))
        raise PerflabError(f"--isolate: could not make the cgroup {name}: {exc}") from None
    weight = CPU_WEIGHT if version == 2 else CPU_SHARES
    return Isolation(version, tuple(str(d) for d in made), weight, cpus)


def _configure(version: int, base: Path, d: Path, cpus: str | None) -> None:
    if version == 2:
        # the controllers must be enabled for the children of the base first
        wanted = ["cpu", *(["cpuset"] if cpus else [])]
        on = _read(base / "cgroup.subtree_control").split()
        for c in wanted:
            if c not in on:
                (base / "cgroup.subtree_control").write_text(f"+{c}")
        (d / "cpu.weight").write_text(str(CPU_WEIGHT))
        if cpus:
            (d / "cpuset.cpus").write_text(cpus)
        return
    if base.name == "cpu":
        (d / "cpu.shares").write_text(str(CPU_SHARES))
    else:  # a v1 cpuset needs its memory nodes before it can take a task
        (d / "cpuset.mems").write_text(_read(base / "cpuset.mems").strip())
        (d / "cpuset.cpus").write_text(str(cpus))


def join(iso: dict[str, Any], seen: str) -> None:
    """Move the calling process into the run's cgroups (in the child, between fork and
    exec: everything it starts is born inside), then read its ``/proc/self/cgroup`` back
    into the new file ``seen`` (read later, it could be a zombie's: an exited process is
    out of every cgroup)."""
    for d in iso["dirs"]:
        with open(os.path.join(d, "cgroup.procs"), "w") as f:
            f.write("0")
    back = _read(Path("/proc/self/cgroup"))
    fd = os.open(seen, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(f"{os.getpid()}\n{back}")


def proof(seen: Path, iso: dict[str, Any]) -> dict[str, Any]:
    """What ``/proc/PID/cgroup`` said of the measured main process as it joined (``join``'s
    file ``seen``), and whether it is in every one of the run's cgroups."""
    try:
        pid_line, *lines = _read(seen).splitlines()
        pid = int(pid_line)
    except (OSError, ValueError) as exc:
        return {"pid": None, "cgroup": [], "inside": False, "error": str(exc)}
    paths = {ln.split(":", 2)[2] for ln in lines if ln.count(":") >= 2}
    names = [os.path.basename(d) for d in iso["dirs"]]
    inside = all(any(p.endswith("/" + n) for p in paths) for n in names)
    return {"pid": pid, "cgroup": lines, "inside": inside}


def remove(iso: Isolation | dict[str, Any], wait_s: float = 2.0) -> bool:
    """Remove the run's cgroups (what is left in one goes to its parent first); True once
    none is left."""
    dirs = iso.dirs if isinstance(iso, Isolation) else tuple(iso["dirs"])
    end = time.monotonic() + wait_s
    left = [Path(d) for d in dirs]
    while left:
        for d in list(left):
            with contextlib.suppress(OSError):
                for pid in _read(d / "cgroup.procs").split():
                    with contextlib.suppress(OSError):
                        (d.parent / "cgroup.procs").write_text(pid)
            try:
                d.rmdir()
            except FileNotFoundError:
                pass
            except OSError:
                continue
            left.remove(d)
        if not left or time.monotonic() > end:
            break
        time.sleep(0.05)
    return not left


def sweep(bases: list[Path]) -> list[str]:
    """Remove the cgroups of runs whose perflab is gone (killed before its supervisor could
    clean up); the names removed."""
    gone = []
    for base in bases:
        with contextlib.suppress(OSError):
            for d in base.iterdir():
                m = _STALE.match(d.name)
                if m and d.is_dir() and not _alive(int(m.group(1))):
                    with contextlib.suppress(OSError):
                        d.rmdir()
                        gone.append(d.name)
    return gone


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _read(p: Path) -> str:
    with open(p) as f:
        return f.read()
