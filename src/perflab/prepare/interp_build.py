"""``perflab interpreters build``: CPython (or any autoconf project) configured, made and
installed into a cache keyed by the source's hash and the build's flags.

A variant lives in ``<cache>/<version>-<flags>-<source hash>/``: ``src/`` (an unpacked
tarball), ``build/`` (out of tree), ``prefix/`` (``make install``), ``build.log`` (every line
configure and make wrote) and, written last and only on success, ``variant.json`` (what it
is: version, flags, configure arguments, the interpreter's path, the seconds each step took).
A PGO build keeps its profile when tests of the training run fail, as CPython 3.11's
Makefile did (3.13's fails the build): the task make runs is the configured one with ``||
echo`` a line of perflab's after it, and the tests that failed are read from regrtest's
summary into ``variant.json`` (``pgo_training``). A training run that failed without such a
summary (a crash: no profile written) still fails the build. The cache key is the task
asked for (None: CPython's own), so variants built before keep theirs.
A build without that marker is not a variant: the next build of the same key starts again
from a clean directory. The install prefix is compiled into the interpreter, so a variant is
built where it stays (no rename into place); a lock file keeps two builds of one key apart.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from perflab.errors import PerflabError
from perflab.factors.kinds.pybuild import MARKER, cache_root
from perflab.files import atomic_write, private_dir

#: Flag -> configure argument, in the order they appear in a variant's name.
FLAGS = {
    "nogil": "--disable-gil",
    "jit": "--enable-experimental-jit",
    "pgo": "--enable-optimizations",
    "lto": "--with-lto",
}
TAIL_LINES = 15
#: CPython's own PGO training task, its failures tolerated as CPython 3.11 did (make runs
#: the recipe line ``./python $(PROFILE_TASK)`` through the shell).
PGO_TOLERANT = "-m test --pgo || true"
#: The line the shell prints when the PGO training task exits non-zero (make runs the recipe
#: line ``./python $(PROFILE_TASK)`` through it); make's echo of the recipe is another line.
#: Unquoted, it passes to a sub-make (``$(MAKE) profile-run-stamp``) as any word does.
TRAINING_FAILED = "perflab: the PGO training run exited non-zero"
#: A configured Makefile's training task (CPython's: ``-m test --pgo --timeout=…``).
PROFILE_TASK_RE = re.compile(r"^PROFILE_TASK=[ \t]*(.*?)[ \t]*$", re.M)
#: regrtest's progress line of a test that failed: ``0:00:34 load avg: 5.28 [19/43]
#: test_generators failed (1 failure)`` (``[19/43/1]`` once one has failed before).
TEST_FAILED_RE = re.compile(r"\[\s*\d+/\d+(?:/\d+)?\] (\S+) (?:failed|crashed|timed out)\b")
#: Seconds between progress lines while one step runs.
HEARTBEAT_S = 60.0
PATCHLEVEL_RE = re.compile(r'#define\s+PY_VERSION\s+"([^"]+)"')
#: ``python3.11_3.11.2.orig.tar.gz``: the release (three parts) before the series (two)
VERSION_IN_NAME = (re.compile(r"(\d+\.\d+\.\d+)"), re.compile(r"(\d+\.\d+)"))


class BuildFailed(PerflabError):
    """A step of a build failed (not bad input): the step, the log, and the log's tail."""

    def __init__(self, what: str, tail: str) -> None:
        super().__init__(f"{what}; its last lines:\n{tail}")
        self.what, self.tail = what, tail


@dataclass(frozen=True)
class BuildRequest:
    """What to build: a source tree or tarball and the variant's flags."""

    source: Path
    flags: tuple[str, ...] = ()
    jobs: int = 2
    nice: int = 15
    #: ``PROFILE_TASK`` for a PGO build (None: CPython's own, the full training run).
    profile_task: str | None = None
    extra_configure: tuple[str, ...] = field(default_factory=tuple)


def source_hash(source: Path) -> str:
    """sha256 of a tarball's bytes, or of a tree's files (relative path and content), so an
    edited tree is another variant."""
    h = hashlib.sha256()
    if source.is_file():
        with source.open("rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                h.update(block)
        return h.hexdigest()
    for root, dirs, files in os.walk(source):
        dirs[:] = sorted(d for d in dirs if d not in {".git", "__pycache__"})
        for name in sorted(files):
            p = Path(root) / name
            h.update(f"{p.relative_to(source)}\0".encode())
            if p.is_symlink():
                h.update(os.readlink(p).encode())
            else:
                h.update(hashlib.sha256(p.read_bytes()).digest())
    return h.hexdigest()


def source_version(source: Path, tree: Path | None = None) -> str:
    """The version a source says it is: ``Include/patchlevel.h``'s ``PY_VERSION`` in a
    CPython tree, else the first ``X.Y[.Z]`` in the tarball's or folder's name, else
    ``0``."""
    if tree is not None:
        patch = tree / "Include" / "patchlevel.h"
        if patch.is_file():
            m = PATCHLEVEL_RE.search(patch.read_text(errors="replace"))
            if m:
                return m.group(1)
    for pattern in VERSION_IN_NAME:
        m = pattern.search(source.name)
        if m:
            return m.group(1)
    return "0"


def variant_key(version: str, flags: tuple[str, ...], digest: str, profile: str | None) -> str:
    """``3.13.5-nogil-pgo-93e583f24345``: readable, and distinct for each source and flags."""
    names = [f for f in FLAGS if f in flags] or ["default"]
    key = f"{version}-{'-'.join(names)}-{digest[:12]}"
    if profile is not None:
        key += "-pt" + hashlib.sha256(profile.encode()).hexdigest()[:6]
    return key


def check_request(req: BuildRequest) -> None:
    """Bad input as one PerflabError naming it, before anything is made."""
    if not req.source.exists():
        raise PerflabError(f"--source {req.source}: no such file or folder")
    unknown = [f for f in req.flags if f not in FLAGS]
    if unknown:
        raise PerflabError(f"build flag {unknown[0]!r}: one of {', '.join(FLAGS)}")
    if req.jobs < 1:
        raise PerflabError(f"--jobs {req.jobs}: must be at least 1")
    if req.profile_task is not None and "pgo" not in req.flags:
        raise PerflabError("--profile-task is for a PGO build (--pgo)")
    if req.source.is_file() and not tarfile.is_tarfile(req.source):
        raise PerflabError(f"--source {req.source}: not a tarball nor a folder")


def build(
    req: BuildRequest, root: Path | None = None, say: Callable[[str], None] = print
) -> dict[str, Any]:
    """Build ``req`` into the cache (``root``, default :func:`cache_root`) unless it is
    there: its ``variant.json`` (with ``"cached": true`` when it was). A failed step is a
    PerflabError naming the step, the log, and the log's last lines."""
    check_request(req)
    root = private_dir(root or cache_root())
    say(f"hashing {req.source}")
    digest = source_hash(req.source)
    version = source_version(req.source, req.source if req.source.is_dir() else None)
    key = variant_key(version, req.flags, digest, req.profile_task)
    dest = root / key
    with open(root / f".{key}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        if (dest / MARKER).is_file():
            return {**json.loads((dest / MARKER).read_text()), "cached": True}
        shutil.rmtree(dest, ignore_errors=True)  # a failed or interrupted build's remains
        private_dir(dest)
        return _build_into(req, dest, digest, say)


def _build_into(
    req: BuildRequest, dest: Path, digest: str, say: Callable[[str], None]
) -> dict[str, Any]:
    tree = req.source
    times: dict[str, float] = {}
    log = dest / "build.log"
    log.touch(mode=0o600)
    if req.source.is_file():
        say(f"unpacking {req.source.name}")
        tree = _unpack(req.source, dest / "src")
    version = source_version(req.source, tree)
    configure = [
        str(tree / "configure"),
        f"--prefix={dest / 'prefix'}",
        *(FLAGS[f] for f in FLAGS if f in req.flags),
        *req.extra_configure,
    ]
    if not (tree / "configure").is_file():
        raise PerflabError(f"--source {req.source}: no configure script in {tree}")
    work = private_dir(dest / "build")
    nice = ["nice", "-n", str(req.nice)] if req.nice else []
    env = dict(os.environ)
    if "jit" in req.flags:
        # the JIT's stencils are generated by a Python script run by PYTHON_FOR_REGEN, which
        # configure otherwise finds on PATH by name: a pyenv shim of a version not selected
        # (``pyenv: python3.13: command not found``) failed the first JIT build here
        env["PYTHON_FOR_REGEN"] = sys.executable
    times["configure"] = _step("configure", [*nice, *configure], work, log, say, env)
    task = _profile_task(req, work)
    make = ["make", f"-j{req.jobs}", *([f"PROFILE_TASK={task} || echo {TRAINING_FAILED}"]
                                       if task is not None else [])]  # fmt: skip
    times["make"] = _step("make", [*nice, *make], work, log, say, env)
    training = None if task is None else _training(task, log, say)
    times["install"] = _step("install", [*nice, "make", "install"], work, log, say, env)
    python = _installed_python(dest / "prefix", version)
    info = {
        "key": dest.name,
        "version": version,
        "flags": [f for f in FLAGS if f in req.flags],
        "configure": configure[1:],
        "profile_task": req.profile_task,
        **({"pgo_training": training} if training is not None else {}),
        "source": str(req.source.resolve()),
        "source_sha256": digest,
        "python": str(python) if python else None,
        "seconds": times,
        "jobs": req.jobs,
        "built_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "log": str(log),
    }
    shutil.rmtree(work, ignore_errors=True)  # objects: hundreds of MB, not needed to run
    atomic_write(dest / MARKER, json.dumps(info, indent=1))
    return {**info, "cached": False}


def _profile_task(req: BuildRequest, work: Path) -> str | None:
    """The PGO training task make is to run: the one asked for, else the configured
    Makefile's (CPython's own); None when the build is not PGO or names no task (make then
    runs its own recipe, untouched)."""
    if "pgo" not in req.flags:
        return None
    if req.profile_task is not None:
        return req.profile_task
    makefile = work / "Makefile"
    m = PROFILE_TASK_RE.search(makefile.read_text(errors="replace")) if makefile.is_file() else None
    return m.group(1) if m and m.group(1) else None


def training_outcome(text: str) -> dict[str, Any]:
    """What the make step's output (``text``) says of the PGO training run: whether its task
    exited non-zero (``failed``), the tests regrtest named as failed (it prints no summary of
    names under ``--pgo``: its progress lines ``[19/43] test_generators failed (1 failure)``)
    and its last ``Result:`` and ``Total tests:`` lines (None: it did not get that far)."""
    lines = [ln.strip() for ln in text.splitlines()]
    failed = [m.group(1) for ln in lines if (m := TEST_FAILED_RE.search(ln))]
    last: dict[str, str | None] = {key: None for key in ("Result:", "Total tests:")}
    for ln in lines:
        for key in last:
            if ln.startswith(key):
                last[key] = ln.removeprefix(key).strip()
    return {
        "failed": TRAINING_FAILED in lines,
        "failed_tests": list(dict.fromkeys(failed)),
        "result": last["Result:"],
        "tests": last["Total tests:"],
    }


def _training(task: str, log: Path, say: Callable[[str], None]) -> dict[str, Any]:
    """The PGO training run's outcome for ``variant.json``; one that failed before regrtest's
    result (a crash: no profile written, the build would be PGO in name only) is a
    BuildFailed."""
    text = log.read_text(errors="replace")
    outcome = training_outcome(text[text.rfind("\n==== make: ") :])
    if outcome["failed"] and outcome["result"] is None:
        raise BuildFailed(
            f"build failed at make: the PGO training run ({task}) failed before its tests' "
            f"result (no profile to keep); log {log}",
            tail(log),
        )
    if outcome["failed"]:
        names = ", ".join(outcome["failed_tests"]) or "none named"
        say(f"PGO training run: {outcome['result']} (failed: {names}); its profile is kept, "
            "as CPython 3.11 did, and the failure recorded in variant.json")  # fmt: skip
    return {"task": task, **outcome}


def _unpack(tarball: Path, into: Path) -> Path:
    """The tarball's files under ``into`` (nothing outside it: tarfile's ``data`` filter);
    the one top folder it holds, if it holds one."""
    private_dir(into)
    try:
        with tarfile.open(tarball) as tar:
            tar.extractall(into, filter="data")
    except (tarfile.TarError, OSError) as exc:
        raise PerflabError(f"--source {tarball}: cannot unpack it ({exc})") from None
    tops = list(into.iterdir())
    return tops[0] if len(tops) == 1 and tops[0].is_dir() else into


def _step(
    step: str,
    argv: list[str],
    cwd: Path,
    log: Path,
    say: Callable[[str], None],
    env: dict[str, str] | None = None,
) -> float:
    """Run one step with its output appended to ``log``, a progress line now and then; its
    seconds. A failure is a PerflabError with the log's tail."""
    say(f"{step}: {' '.join(argv[:6])}{' …' if len(argv) > 6 else ''}")
    start = time.monotonic()
    with log.open("a") as out:
        out.write(f"\n==== {step}: {' '.join(argv)}\n")
        out.flush()
        try:
            proc = subprocess.Popen(argv, cwd=cwd, stdout=out, stderr=subprocess.STDOUT, env=env)
        except OSError as exc:
            raise PerflabError(f"build step {step}: cannot start {argv[0]}: {exc}") from None
        try:
            while True:
                try:
                    rc = proc.wait(timeout=HEARTBEAT_S)
                    break
                except subprocess.TimeoutExpired:
                    say(f"{step}: {time.monotonic() - start:.0f} s, {_last_line(log)}")
        except BaseException:
            proc.kill()
            proc.wait()
            raise
    if rc != 0:
        last = tail(log)
        raise BuildFailed(f"build failed at {step} (exit {rc}); log {log}{_hint(last)}", last)
    return round(time.monotonic() - start, 1)


def _hint(last: str) -> str:
    """What to do about a failure the log's tail shows a known cause of."""
    if "profile-run-stamp" in last and "Result: FAILURE" in last:
        # 3.13's Makefile runs the PGO training task without 3.11's ``|| true``: one test
        # failing under the instrumented build (test_generators, here) fails the build
        return (f" (a test of the PGO training run failed, which fails a 3.13 build: give "
                f"--profile-task {PGO_TOLERANT!r} to keep its profile regardless)")  # fmt: skip
    return ""


def tail(log: Path, lines: int = TAIL_LINES) -> str:
    """The last ``lines`` lines of a build log."""
    text = log.read_text(errors="replace").splitlines()
    return "\n".join(text[-lines:])


def _last_line(log: Path) -> str:
    last = tail(log, 1)
    return last if len(last) <= 100 else last[:97] + "…"


def _installed_python(prefix: Path, version: str) -> Path | None:
    """The interpreter ``make install`` put in ``prefix/bin`` (``python3.13t`` for a
    free-threaded build); None for a project that installs no Python."""
    minor = ".".join(version.split(".")[:2])
    for name in (f"python{minor}t", f"python{minor}", "python3"):
        p = prefix / "bin" / name
        if p.is_file() and os.access(p, os.X_OK):
            return p
    return None
