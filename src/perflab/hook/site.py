"""perflab's hook inside a command's Python processes (copied as ``sitecustomize.py``).

perflab copies this file into the run's private directory (``$PERFLAB_RUN_DIR/hook``, 0700)
and puts that folder first on the command's ``PYTHONPATH``: every Python process of the
command (the user's script, Parsl's interchange and worker pools, ``multiprocessing``
children) runs it at start-up. It imports nothing of perflab and only the standard library
until the program imports a task system itself.

What it does:

* reads the run's treatment set from ``$PERFLAB_RUN_DIR/treat.json`` (JSON only; opened
  with O_NOFOLLOW; refused unless it is a regular file of this uid, mode 0600, in a 0700
  directory of this uid);
* puts a finder on ``sys.meta_path`` that, when Parsl's modules are imported, wraps
  ``Config.__init__`` and ``HighThroughputExecutor.__init__`` to apply the treated values,
  and records what it saw (the Parsl it imported, each worker pool's options, the log
  configuration each component started, the tasks submitted and completed);
* writes each of those facts as one JSON line to ``$PERFLAB_RUN_DIR/proof/<pid>.jsonl``
  (created O_EXCL | O_NOFOLLOW, 0600).

It opens no socket and no listener. Anything it cannot do is written down as a ``refused``
or ``error`` fact (perflab fails the run with it), never raised into the program.
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:  # the hook imports nothing it does not need at run time
    from collections.abc import Callable
    from typing import Any

PROOF_DIR = "proof"
TREAT_FILE = "treat.json"


def _private_dir_ok(path: str, uid: int) -> str | None:
    try:
        st = os.lstat(path)
    except OSError as exc:
        return f"{path}: {exc.strerror}"
    if (st.st_mode & 0o170000) != 0o040000:
        return f"{path} is not a directory"
    if st.st_uid != uid:
        return f"{path} belongs to uid {st.st_uid}, not {uid}"
    if st.st_mode & 0o077:
        return f"{path} is open to others (mode {st.st_mode & 0o777:o}, not 700)"
    return None


def read_private_json(path: str, uid: int) -> tuple[Any, str | None]:
    """The JSON in ``path``, or (None, why it was refused)."""
    import json

    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        return None, f"{path}: {exc.strerror}"
    try:
        st = os.fstat(fd)
        if (st.st_mode & 0o170000) != 0o100000:
            return None, f"{path} is not a regular file"
        if st.st_uid != uid:
            return None, f"{path} belongs to uid {st.st_uid}, not {uid}"
        if st.st_mode & 0o077:
            return None, f"{path} is open to others (mode {st.st_mode & 0o777:o}, not 600)"
        chunks = []
        while True:
            b = os.read(fd, 1 << 16)
            if not b:
                break
            chunks.append(b)
    finally:
        os.close(fd)
    try:
        return json.loads(b"".join(chunks).decode()), None
    except ValueError as exc:
        return None, f"{path}: not JSON ({exc})"


class Proof:
    """One JSON line per fact, in this process's own file (a forked child opens its own)."""

    def __init__(self, folder: str) -> None:
        self.folder = folder
        self.fd: int | None = None
        self.pid: int | None = None

    def _open(self) -> int:
        pid = os.getpid()
        if self.pid == pid and self.fd is not None:
            return self.fd
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_APPEND | getattr(os, "O_NOFOLLOW", 0)
        for n in range(100):
            name = f"{pid}.jsonl" if n == 0 else f"{pid}-{n}.jsonl"
            try:
                fd = os.open(os.path.join(self.folder, name), flags, 0o600)
                break
            except FileExistsError:
                continue
        else:
            raise OSError("no free proof file name")
        self.fd, self.pid = fd, pid
        return fd

    def write(self, fact: dict[str, Any]) -> None:
        import json

        try:
            fd = self._open()
            fact = {**fact, "pid": os.getpid(), "argv0": self.argv0()}
            os.write(fd, (json.dumps(fact, default=repr) + "\n").encode())
        except OSError as exc:
            sys.stderr.write(f"perflab hook: could not write proof: {exc}\n")

    @staticmethod
    def argv0() -> str:
        """The program this process runs, as each fact names it (the interpreter's name
        with ``-c``/``-m``); the Parsl part asks it too (a worker pool is treated apart)."""
        argv = getattr(sys, "argv", None) or [""]
        a0 = os.path.basename(argv[0]) if argv[0] else ""
        if a0 in ("", "-c", "-m"):
            return f"{os.path.basename(sys.executable)} {argv[0]}".strip()
        return a0


class Watch:
    """A meta-path finder that runs a function after a watched module is executed."""

    def __init__(self, after: dict[str, Callable[[Any], None]]) -> None:
        self.after = after
        self.busy: set[str] = set()

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> Any:
        if name not in self.after or name in self.busy:
            return None
        import importlib.util

        self.busy.add(name)
        try:
            spec = importlib.util.find_spec(name)
        finally:
            self.busy.discard(name)
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        orig = spec.loader.exec_module
        then = self.after[name]

        def exec_module(module: Any) -> None:
            orig(module)
            try:
                then(module)
            except Exception as exc:
                HOOK.proof.write({"fact": "error", "module": name, "error": repr(exc)})

        spec.loader.exec_module = exec_module  # type: ignore[method-assign]
        return spec

    def invalidate_caches(self) -> None:
        pass


HOOK: Any = None


def install(run_dir: str) -> None:
    global HOOK
    uid = os.geteuid()
    proof = Proof(os.path.join(run_dir, PROOF_DIR))
    why = _private_dir_ok(run_dir, uid) or _private_dir_ok(proof.folder, uid)
    if why:
        sys.stderr.write(f"perflab hook: not installed: {why}\n")
        return
    treat, why = read_private_json(os.path.join(run_dir, TREAT_FILE), uid)
    if why or not isinstance(treat, dict):
        proof.write({"fact": "refused", "why": why or "treat.json is not a JSON object"})
        sys.stderr.write(f"perflab hook: treatment refused: {why}\n")
        return
    import perflab_hook_parsl  # beside this file (perflab.hook.arm copies it)

    HOOK = perflab_hook_parsl.Hook(treat, proof)
    import perflab_hook_dask

    after = {**HOOK.watched(), **perflab_hook_dask.watched(HOOK)}
    for package in treat.get("packages", []):
        if isinstance(package, str) and package not in after:
            after[package] = HOOK.on_import
    sys.meta_path.insert(0, Watch(after))
    if any(
        isinstance(op, dict) and op.get("on") in SEEN
        for ops in (treat.get("factors") or {}).values()
        for op in (ops if isinstance(ops, list) else [])
    ):
        proof.write(_started(treat))
        if _asks(treat, "gil") is False and getattr(sys, "_is_gil_enabled", None):
            _watch_gil(proof)


#: Operations whose proof is what each process saw at start-up (``perflab/hook/seen.py``).
SEEN = ("env", "wrapper", "rundir", "startup", "interpreter")
POLICIES = {0: "other", 3: "batch", 5: "idle", 1: "fifo", 2: "rr"}


def _started(treat: dict[str, Any]) -> dict[str, Any]:
    """What this process started with, for the env, wrapper, rundir and startup factors:
    the watched variables only (never the rest of the environment), its scheduling, the
    start-up file that ran before the hook."""
    names = sorted(
        {
            op["var"]
            for ops in treat["factors"].values()
            for op in ops
            if isinstance(op, dict) and op.get("on") == "env" and isinstance(op.get("var"), str)
        }
    )
    fact: dict[str, Any] = {"fact": "process", "env": {n: os.environ.get(n) for n in names}}
    fact["cwd"] = os.getcwd()
    fact["python"] = {
        "executable": os.path.realpath(sys.executable),
        "version": sys.version.split()[0],
        "venv": sys.prefix != sys.base_prefix,
    }
    try:
        fact["nice"] = os.getpriority(os.PRIO_PROCESS, 0)
        fact["policy"] = POLICIES.get(os.sched_getscheduler(0), "other")
        fact["cpus"] = sorted(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        pass
    site = sys.modules.get("sitecustomize")
    file = getattr(site, "__file__", None)
    if file and os.path.abspath(file) != os.path.abspath(__file__):
        fact["sitecustomize"] = os.path.abspath(file)
        fact["trim_path"] = getattr(site, "TRIM_PATH", None)
        fact["bundle_finder"] = any(
            getattr(f, "__name__", "") == "BundleFinder" for f in sys.meta_path
        )
    fact["flags"] = {"safe_path": sys.flags.safe_path, "no_user_site": sys.flags.no_user_site}
    if _asks(treat, "gil") is not None:  # a built variant's: its build, GIL and JIT as seen
        import sysconfig

        gil = getattr(sys, "_is_gil_enabled", None)
        fact["python"]["gil"] = gil() if gil else True
        fact["python"]["config_args"] = sysconfig.get_config_var("CONFIG_ARGS")
        fact["python"]["PYTHON_JIT"] = os.environ.get("PYTHON_JIT")
    return fact


def _asks(treat: dict[str, Any], key: str) -> Any:
    """What an ``interpreter`` operation of the set asks for ``key`` (None: none asks)."""
    for ops in (treat.get("factors") or {}).values():
        for op in ops if isinstance(ops, list) else []:
            if isinstance(op, dict) and op.get("on") == "interpreter" and key in op:
                return op[key]
    return None


def _watch_gil(proof: Any) -> None:
    """Write a ``gil_enabled`` fact as soon as the GIL of this free-threaded process is on
    again: an extension module imported without ``Py_mod_gil`` turns it on (Python warns);
    checked at the warning, at each later import and at exit (the warning's text kept when
    it is shown: a program may filter it out)."""
    import warnings

    state: dict[str, Any] = {"done": False, "text": None}
    shown = warnings.showwarning

    def check(where: str) -> None:
        if not state["done"] and sys._is_gil_enabled():  # type: ignore[attr-defined]
            state["done"] = True
            proof.write({"fact": "gil_enabled", "after": where, "warning": state["text"]})

    def showwarning(message: Any, category: Any, *args: Any, **kwargs: Any) -> Any:
        if "GIL" in str(message) and state["text"] is None:
            state["text"] = str(message)
            check("warning")
        return shown(message, category, *args, **kwargs)

    class GilWatch:
        """A finder that finds nothing: it only looks at the GIL when a module is imported
        (not an audit hook, which would cost every audited event of the measured program)."""

        @staticmethod
        def find_spec(name: str, path: Any = None, target: Any = None) -> None:
            if not state["done"]:
                check(f"import {name}")

    warnings.showwarning = showwarning
    sys.meta_path.insert(0, GilWatch)
    import atexit

    atexit.register(check, "exit")


def _chain() -> None:
    """Run the sitecustomize this one hides (a start-up bundle's, the user's own)."""
    import importlib.machinery
    import importlib.util

    here = os.path.dirname(os.path.abspath(__file__))
    rest = [p for p in sys.path if os.path.abspath(p or ".") != here]
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", rest)
    if spec is None or spec.loader is None:
        return
    module = importlib.util.module_from_spec(spec)
    sys.modules["sitecustomize"] = module
    spec.loader.exec_module(module)


def _main() -> None:
    run_dir = os.environ.get("PERFLAB_RUN_DIR")
    try:
        _chain()
    finally:
        # after the chained one: a start-up bundle's finder must not hide Parsl from ours
        if run_dir and os.environ.get("PERFLAB_HOOK") == "1":
            try:
                install(run_dir)
            except Exception as exc:
                sys.stderr.write(f"perflab hook: {exc!r}\n")


if __name__ == "sitecustomize":
    _main()
