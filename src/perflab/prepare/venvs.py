"""Private, cached virtual environments: one per (base interpreter, requirements).

A venv is built once into ``<perflab_home>/venvs/<label>-<key>``, the key hashing the base
interpreter's real path and version and the sorted requirements, and reused by every later
run that asks for the same environment. It is built in a temporary directory and renamed into
place only when pip succeeded, so a failed install leaves nothing behind; a lock file keeps
two perflab processes from building the same venv at once.
"""

from __future__ import annotations

import fcntl
import hashlib
import importlib.metadata
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass, replace
from pathlib import Path

from perflab.errors import PerflabError
from perflab.factors.requirements import check_requirement, requirement_name
from perflab.files import private_dir
from perflab.spec import RunSpec

#: What the measured child imports besides the target's packages (perflab itself comes from
#: PYTHONPATH, so a venv never needs perflab installed).
CHILD_REQUIREMENTS = ("psutil",)
MARKER = "perflab-venv.json"
PIP_TIMEOUT_S = 900.0
_PROBE = (
    "import platform, sys; "
    "print(getattr(sys, '_base_executable', sys.executable)); print(platform.python_version())"
)


@dataclass(frozen=True)
class Venv:
    path: Path
    python: Path
    python_version: str
    requirements: tuple[str, ...]
    installed: dict[str, str]


SKIP_DIRS = {".git", "__pycache__", ".venv", "build", "dist", ".mypy_cache", ".pytest_cache"}


def tree_fingerprint(path: Path) -> str:
    """Hash of a source tree's files (relative path, size, mtime), skipping VCS and caches,
    so an edited tree gets a fresh venv. A dangling symlink counts by its link text."""
    h = hashlib.sha256()
    for root, dirs, files in os.walk(path):
        dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS and not d.endswith(".egg-info"))
        for name in sorted(files):
            stamp = _file_stamp(Path(root) / name)
            h.update(f"{os.path.relpath(root, path)}/{name}:{stamp}".encode())
    return h.hexdigest()[:16]


def _file_stamp(file: Path) -> str:
    """``size:mtime`` of a file (a link's target's); a link that leads nowhere (dangling, or a
    loop) by its own text: Parsl's tree holds one (parsl/tests/sites/test_mpi/mpi_hello)."""
    if file.is_symlink():
        try:
            st = file.stat()
        except OSError:
            return f"->{os.readlink(file)}"
    else:
        st = file.stat()
    return f"{st.st_size}:{st.st_mtime_ns}"


def base_interpreter(python: str) -> tuple[str, str]:
    """(real path of the base interpreter, its version) for ``python``."""
    try:
        out = subprocess.run(
            [python, "-c", _PROBE], capture_output=True, text=True, timeout=60, check=True
        )
        exe, version = out.stdout.split()[:2]
    except (OSError, ValueError, subprocess.SubprocessError) as exc:
        raise PerflabError(f"interpreter {python}: cannot run it ({exc})") from None
    return str(Path(exe).resolve()), version


def venv_key(base: str, version: str, requirements: list[str]) -> str:
    trees = [tree_fingerprint(Path(r)) for r in requirements if os.sep in r]
    payload: list[object] = [base, version, sorted(requirements)]
    h = hashlib.sha256(json.dumps(payload + ([trees] if trees else [])).encode())
    return h.hexdigest()[:12]


def ensure_venv(python: str | None, requirements: list[str], root: Path) -> Venv:
    """The cached venv of ``python`` (default: the one running perflab) with ``requirements``
    and what the measured child needs; built on first use. A requirement that pip cannot
    install is a PerflabError naming it, with pip's own last lines."""
    reqs = sorted({check_requirement(r) for r in requirements})
    names = {requirement_name(r) for r in reqs}
    reqs += [r for r in CHILD_REQUIREMENTS if r not in names]
    base, version = base_interpreter(python or sys.executable)
    label = "-".join(
        ["py" + version]
        + [r.replace("==", "-") for r in reqs if "==" in r]
        + ["src-" + Path(r).name for r in reqs if os.sep in r]
    )
    dest = root / f"{re.sub(r'[^A-Za-z0-9.-]', '_', label)[:80]}-{venv_key(base, version, reqs)}"
    # a cached venv is trusted by its marker: only if no one else can write where it lies
    private_dir(root)
    with open(root / f".{dest.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        if not (dest / MARKER).is_file():
            _build(base, reqs, dest)
    info = json.loads((dest / MARKER).read_text())
    return Venv(dest, dest / "bin" / "python", version, tuple(reqs), info["installed"])


def _build(base: str, reqs: list[str], dest: Path) -> None:
    tmp = dest.with_name(dest.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    try:
        # perflab's own pip drives the venv's interpreter (``pip --python``): a venv then
        # needs no pip of its own, and ensurepip was ~7 s of every build (a bisection builds
        # one venv a commit). Without a pip here, the venv gets its own.
        own_pip = importlib.util.find_spec("pip") is not None
        venv = [base, "-m", "venv", *(["--without-pip"] if own_pip else []), str(tmp)]
        _run(venv, f"python -m venv with {base}")
        python = str(tmp / "bin" / "python")
        pip = (
            [sys.executable, "-m", "pip", "--python", python] if own_pip else [python, "-m", "pip"]
        )
        # Built in place at its final path would need no relocation; venvs are not
        # relocatable, so it is built at ``tmp`` and its scripts' #! lines fixed after the move.
        _run([*pip, "install", "--disable-pip-version-check", "-q", *reqs],
             "pip install " + " ".join(reqs))  # fmt: skip
        installed = _installed(tmp / "bin" / "python")
        missing = [r for r in reqs if os.sep not in r and requirement_name(r) not in installed]
        if missing:
            raise PerflabError(f"private venv: {', '.join(missing)} not installed after pip")
        (tmp / MARKER).write_text(
            json.dumps({"base": base, "requirements": reqs, "installed": installed}, indent=1)
        )
        tmp.rename(dest)
        _relocate(tmp, dest)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        shutil.rmtree(dest, ignore_errors=True)
        raise


def _run(argv: list[str], what: str) -> None:
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=PIP_TIMEOUT_S)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise PerflabError(f"{what}: {exc}") from None
    if proc.returncode != 0:
        lines = [ln for ln in (proc.stderr or proc.stdout).splitlines() if ln.strip()]
        errors = [ln for ln in lines if ln.startswith("ERROR")] or lines[-3:]
        # pip lists every version there is: keep the line, not the list
        errors = [
            re.sub(r"\(from versions: [^)]{60,}\)", "(from versions: ...)", e) for e in errors
        ]
        raise PerflabError(f"{what} failed: {' | '.join(errors[-2:])}")


def _installed(python: Path) -> dict[str, str]:
    code = (
        "import json, importlib.metadata as m; "
        "print(json.dumps({d.metadata['Name'].lower().replace('_', '-'): d.version "
        "for d in m.distributions()}))"
    )
    out = subprocess.run([str(python), "-c", code], capture_output=True, text=True, check=True)
    return dict(json.loads(out.stdout))


def _relocate(old: Path, new: Path) -> None:
    """Rewrite the venv's absolute paths (scripts' #! lines, activate) from ``old`` to ``new``."""
    for f in (new / "bin").iterdir():
        if f.is_symlink() or not f.is_file():
            continue
        data = f.read_bytes()
        if str(old).encode() in data[:4096] or f.name.startswith("activate"):
            f.write_bytes(data.replace(str(old).encode(), str(new).encode()))
    cfg = new / "pyvenv.cfg"
    cfg.write_text(cfg.read_text().replace(str(old), str(new)))


def provides(tree: Path, package: str) -> bool:
    """Whether source tree ``tree`` holds importable package ``package`` (``DIR/pkg`` or
    ``DIR/src/pkg``)."""
    top = package.replace("-", "_")
    return any((d / "__init__.py").is_file() for d in (tree / top, tree / "src" / top))


def caller_pins(packages: tuple[str, ...]) -> list[str]:
    """``name==version`` of each package as installed where perflab runs (skipping absent)."""
    out = []
    for name in packages:
        try:
            out.append(f"{name}=={importlib.metadata.version(name)}")
        except importlib.metadata.PackageNotFoundError:
            pass
    return out


class VariantError(PerflabError):
    """A package of a command's own program that pip cannot install for the variant
    interpreter: the run's own failure (prepare records it), not bad input."""


def in_venv(spec: RunSpec, root: Path, program: dict[str, str] | None = None) -> RunSpec:
    """``spec`` made to run in its private venv, when it asks for one (package versions, a
    source tree, or an interpreter that needs perflab's dependencies); otherwise unchanged.

    The target's own packages not named in ``spec.packages`` are pinned to the versions
    installed here, so that a venv differs from this environment only in what was asked;
    so are a command's ``program`` packages (name -> version, ``prepare/program.py``). One
    of those that pip cannot install is a :class:`VariantError` naming it.
    """
    if not spec.packages and spec.venv_base is None:
        return spec
    if spec.patches:
        raise PerflabError(
            "a patch applies to the package installed here; it cannot be combined with "
            "package versions or another interpreter's venv"
        )
    asked = [check_requirement(r) for r in spec.packages]
    names = {requirement_name(r) for r in asked if os.sep not in r}
    trees = [Path(r) for r in asked if os.sep in r]
    engine_packages: tuple[str, ...] = ()
    if spec.command is None:
        from perflab.engines import ENGINES

        engine_packages = ENGINES.get(spec.target).packages
    # a package a source tree provides is not pinned beside it: the tree declares its own
    # version (a checkout's ``1.3.0-dev``), and pip cannot install both
    pins = [
        p
        for p in caller_pins(engine_packages)
        if requirement_name(p) not in names
        and not any(provides(t, requirement_name(p)) for t in trees)
    ]
    own = [f"{n}=={v}" for n, v in (program or {}).items() if n not in names]
    try:
        venv = ensure_venv(spec.venv_base or spec.python, asked + pins + own, root)
    except PerflabError as exc:
        raise _program_failed(exc, own, spec.venv_base or spec.python or sys.executable) from None
    return replace(spec, python=str(venv.python), packages=asked)


def _program_failed(exc: PerflabError, own: list[str], python: str) -> PerflabError:
    """The error of a venv build that failed: a :class:`VariantError` naming the program's
    package pip could not install (its first named in pip's own lines), else ``exc``."""
    text = str(exc)
    why = text.split(" failed: ", 1)[-1]
    words = {requirement_name(w) for w in re.split(r"[\s(),;:|'\"]+", why) if w}
    for req in own:
        if requirement_name(req) in words or req.lower() in why.lower():
            return VariantError(
                f"the program's package {req} cannot be installed for {python}: {why}"
            )
    return exc
