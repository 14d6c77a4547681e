"""The defaults of a release's configuration classes, read in that release's own venv, and
the ones that changed between two releases as factors ("restore A's default" in B).

Each class (or function) is imported by the release's interpreter and read with
``inspect.signature``; for a class, every keyword with a default is traced to the ``__init__``
in its MRO that declares it, so the factor edits the right function (``set_default``
transform). Options a run sets itself (the user's ``--opt``, and what perflab's engine sets,
such as HTEX's ``encrypted=True``) never reach the default: they are left out and listed.
"""

from __future__ import annotations

import ast
import json
import re
import subprocess
from dataclasses import asdict, dataclass
from typing import Any

from perflab.errors import PerflabError

#: Configuration classes per engine target (``module:qualname``).
TARGET_CLASSES: dict[str, tuple[str, ...]] = {
    "parsl-htex": (
        "parsl.executors:HighThroughputExecutor",
        "parsl.providers:LocalProvider",
        "parsl.config:Config",
    ),
    "parsl-threads": ("parsl.executors:ThreadPoolExecutor", "parsl.config:Config"),
}
#: Configuration classes a user's own program (a command target) may build, per package of
#: the releases: every engine target's of that package (the program passes its own keywords,
#: so none is left out as perflab's).
COMMAND_CLASSES: dict[str, tuple[str, ...]] = {
    "parsl": tuple(dict.fromkeys(TARGET_CLASSES["parsl-htex"] + TARGET_CLASSES["parsl-threads"])),
    # and its dask.config defaults (explain/dask_config.py): most of Dask's tuning is there
    "distributed": ("distributed:LocalCluster", "distributed:Client"),
}


def classes_for(target: str, command: str | None, package: str) -> tuple[str, ...]:
    """The configuration classes whose defaults are compared when none are given: the
    engine target's, or for a command the classes of the releases' package it may build."""
    if command is not None:
        return COMMAND_CLASSES.get(package, ())
    return TARGET_CLASSES.get(target, ())


#: Keywords perflab's engine passes itself, per target and class name (they hide a change of
#: the release's default; ``encrypted`` is perflab's safety setting, docs/security.md).
ENGINE_SET: dict[str, dict[str, tuple[str, ...]]] = {
    "parsl-htex": {
        "HighThroughputExecutor": (
            "label",
            "address",
            "provider",
            "max_workers_per_node",
            "max_workers",
            "encrypted",
        ),
        "LocalProvider": ("init_blocks", "min_blocks", "max_blocks"),
        "Config": ("executors", "strategy"),
    },
}
#: ``--opt`` keys that are the class's keyword of another name.
OPT_KEYWORDS = {"workers": "max_workers_per_node", "blocks": "init_blocks"}

_PROBE = r"""
import importlib, inspect, json, sys
out = {}
for spec in sys.argv[1:]:
    mod, _, qual = spec.partition(":")
    try:
        obj = importlib.import_module(mod)
        for part in qual.split("."):
            obj = getattr(obj, part)
        sig = inspect.signature(obj)
    except Exception as exc:
        out[spec] = {"error": f"{type(exc).__name__}: {exc}"}
        continue
    params = {}
    for name, p in sig.parameters.items():
        if p.default is inspect.Parameter.empty:
            continue
        owner = obj
        if inspect.isclass(obj):
            owner = next((c.__init__ for c in obj.__mro__ if "__init__" in vars(c)
                          and name in inspect.signature(c.__init__).parameters), obj.__init__)
        owner = inspect.unwrap(owner)
        params[name] = {"repr": repr(p.default), "module": owner.__module__,
                        "function": owner.__qualname__}
    out[spec] = {"params": params}
print(json.dumps(out))
"""


@dataclass
class DefaultChange:
    """One keyword default that differs between releases A and B."""

    cls: str
    name: str
    a: str
    b: str
    module: str
    function: str
    #: why it is not a factor ("" when it is): set by the run, not a Python literal, …
    left_out: str = ""

    @property
    def factor(self) -> str:
        short = self.cls.rpartition(":")[2].rpartition(".")[2]
        return f"dflt_{short}_{self.name}"

    def transform(self, package: str) -> dict[str, Any]:
        """The ``set_default`` transform that puts A's default back in B."""
        return {
            "package": package,
            "op": "set_default",
            "module": self.module,
            "function": self.function,
            "name": self.name,
            "expr": self.a,
        }

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "factor": self.factor}


def introspect(python: str, classes: list[str], label: str) -> dict[str, dict[str, Any]]:
    """``{class: {keyword: {repr, module, function}}}`` as ``python`` (a release's venv)
    sees them. A class that cannot be imported or read is a PerflabError naming it."""
    try:
        proc = subprocess.run(
            [python, "-c", _PROBE, *classes], capture_output=True, text=True, timeout=120
        )
        found = json.loads(proc.stdout) if proc.returncode == 0 else None
    except (OSError, subprocess.SubprocessError, ValueError):
        found = None
    if found is None:
        raise PerflabError(f"{label}: cannot read configuration classes with {python}")
    bad = {c: v["error"] for c, v in found.items() if "error" in v}
    if bad:
        cls, why = next(iter(bad.items()))
        raise PerflabError(
            f"--config-class {cls}: cannot introspect it in {label} ({why.splitlines()[0]})"
        )
    return {c: v["params"] for c, v in found.items()}


def changed_defaults(
    a: dict[str, dict[str, Any]],
    b: dict[str, dict[str, Any]],
    explicit: dict[str, tuple[str, ...]] | None = None,
) -> list[DefaultChange]:
    """Every keyword default present in both releases whose value differs. ``explicit``
    (class short name -> keywords the run sets itself) marks the ones a run never sees."""
    explicit = explicit or {}
    out = []
    for cls in sorted(set(a) & set(b)):
        short = cls.rpartition(":")[2].rpartition(".")[2]
        for name in sorted(set(a[cls]) & set(b[cls])):
            pa, pb = a[cls][name], b[cls][name]
            if _same(pa["repr"], pb["repr"]):
                continue
            ch = DefaultChange(cls, name, pa["repr"], pb["repr"], pb["module"], pb["function"])
            if name in explicit.get(short, ()):
                ch.left_out = "set explicitly by the run (the user's --opt or perflab's engine)"
            elif not _literal(pa["repr"]):
                ch.left_out = f"A's default {pa['repr'][:40]} is not a Python literal"
            out.append(ch)
    return out


def _same(a: str, b: str) -> bool:
    """Equal reprs, object addresses aside (``<X object at 0x7f…>`` differs every run)."""
    return _ADDRESS.sub("", a) == _ADDRESS.sub("", b)


_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")


def _literal(text: str) -> bool:
    try:
        ast.literal_eval(text)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return False
    return True


def explicit_keywords(target: str, opts: dict[str, Any]) -> dict[str, tuple[str, ...]]:
    """Keywords set by the run, per class short name: the engine's own and the user's
    ``--opt`` keys (the engine options are the executor's keywords)."""
    out = {k: tuple(v) for k, v in ENGINE_SET.get(target, {}).items()}
    user = tuple(OPT_KEYWORDS.get(k, k) for k in opts)
    for cls in out or {"": ()}:
        out[cls] = (*out.get(cls, ()), *user)
    return out
