"""The ``dask.config`` defaults two releases of Dask's ``distributed`` ship, and the ones that
changed as factors of release B: "A's value of key K", set through Dask's own environment
variable (``DASK_DISTRIBUTED__SCHEDULER__WORK_STEALING=True``) in every process of the
user's program.

Dask reads most of its tuning from configuration (distributed.yaml: work stealing, heartbeat
and tick intervals, spill thresholds, compression ...), not from keyword defaults, so a
change there is invisible to ``defaults.py``'s signatures. The defaults are read by each
release's own interpreter (``dask.config.defaults``, what the releases ship: never the
user's own files or variables); a program that sets a key itself keeps its own value.
"""

from __future__ import annotations

import ast
import json
import re
import subprocess
from dataclasses import asdict, dataclass
from typing import Any

from perflab.errors import PerflabError

#: The configuration prefixes compared, per package of the releases.
PREFIXES: dict[str, tuple[str, ...]] = {"distributed": ("distributed.",)}
#: Keys that say nothing about performance (where the dashboard listens, its links).
SKIP = ("distributed.dashboard.", "distributed.admin.system-monitor.gil", "distributed.rmm.")

_PROBE = r"""
import json, sys
import dask.config
import distributed  # noqa: F401  (adds its defaults to dask.config.defaults)

out = {}
def walk(d, prefix):
    for k, v in d.items():
        if isinstance(v, dict) and v:
            walk(v, prefix + str(k) + ".")
        else:
            out[prefix + str(k)] = repr(v)
merged = {}
for d in dask.config.defaults:
    dask.config.update(merged, d)
walk(merged, "")
print(json.dumps(out))
"""


@dataclass
class ConfigChange:
    """One ``dask.config`` default that differs between releases A and B."""

    key: str
    a: str
    b: str
    #: why it is not a factor ("" when it is)
    left_out: str = ""

    @property
    def factor(self) -> str:
        short = self.key.removeprefix("distributed.")
        return "dcfg_" + re.sub(r"[^A-Za-z0-9]+", "_", short).strip("_")

    @property
    def env(self) -> str:
        """Dask's variable for the key: ``__`` nests, the rest upper case (dask lower-cases
        it back, and reads ``_`` and ``-`` in a key as the same)."""
        return "DASK_" + "__".join(p.replace("-", "_").upper() for p in self.key.split("."))

    def table(self) -> dict[str, Any]:
        """The catalog table of the factor that restores A's value in B."""
        return {
            "description": f"restore A's dask.config {self.key}={self.a[:60]}",
            "category": "safe_config",
            "env": {self.env: self.a},
        }

    def to_dict(self) -> dict[str, Any]:
        return {
            "cls": "dask.config",
            "name": self.key,
            **{k: v for k, v in asdict(self).items() if k != "key"},
            "factor": self.factor,
            "env": self.env,
        }


def read_config(python: str, label: str) -> dict[str, str]:
    """``{dotted key: repr of the default}`` as ``python`` (a release's venv) ships them; a
    release whose Dask cannot be read is a PerflabError naming it."""
    try:
        proc = subprocess.run(
            [python, "-I", "-c", _PROBE],
            capture_output=True,
            text=True,
            timeout=120,
            env={"PATH": "/usr/bin:/bin", "DASK_CONFIG": "/nonexistent"},
        )
        found = json.loads(proc.stdout) if proc.returncode == 0 else None
    except (OSError, subprocess.SubprocessError, ValueError):
        found = None
    if not isinstance(found, dict):
        raise PerflabError(f"{label}: cannot read its dask.config defaults with {python}")
    return {str(k): str(v) for k, v in found.items()}


def changed_config(
    a: dict[str, str], b: dict[str, str], prefixes: tuple[str, ...]
) -> list[ConfigChange]:
    """Every key under ``prefixes`` present in both releases whose default differs; one
    whose A value is not a Python literal (Dask could not read it back) is left out."""
    out = []
    for key in sorted(set(a) & set(b)):
        if not key.startswith(prefixes) or key.startswith(SKIP) or a[key] == b[key]:
            continue
        change = ConfigChange(key, a[key], b[key])
        try:
            ast.literal_eval(a[key])
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            change.left_out = f"A's value {a[key][:40]} is not a Python literal"
        out.append(change)
    names = [c.factor for c in out]
    for c in out:  # two keys that sanitise alike: neither is guessed between
        if names.count(c.factor) > 1:
            c.left_out = c.left_out or f"its factor name {c.factor} is not unique"
    return out


def config_changes(
    package: str, python_a: str, python_b: str, a: str, b: str
) -> list[ConfigChange]:
    """The changed ``dask.config`` defaults between two releases of ``package`` (none for a
    package whose configuration is not Dask's)."""
    prefixes = PREFIXES.get(package)
    if not prefixes:
        return []
    ca = read_config(python_a, f"{package} {a}")
    cb = read_config(python_b, f"{package} {b}")
    return changed_config(ca, cb, prefixes)


def config_factors(
    package: str,
    python: dict[str, str],
    releases: tuple[str, str],
    tables: dict[str, dict[str, Any]],
    listed: list[str],
) -> list[dict[str, Any]]:
    """The changed ``dask.config`` defaults of ``package``'s releases A and B (``python``:
    each release's interpreter): each a factor table added to ``tables``, or a line in
    ``listed`` saying why it is not one; every change as the explanation lists it."""
    a, b = releases
    out = []
    for c in config_changes(package, python[a], python[b], a, b):
        if c.left_out:
            listed.append(f"{c.factor}: {c.b} in B, {c.a} in A — {c.left_out}")
        else:
            tables[c.factor] = c.table()
        out.append(c.to_dict())
    return out
