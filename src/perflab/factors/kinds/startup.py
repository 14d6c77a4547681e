"""``startup``: cut Python's start-up file-system load in every process of the tree.

``startup = { bundle = ["module", ...], trim_path = true }``:

* ``bundle``: the modules whose imports are served from one pre-compiled file (the start-up
  study's system-image idea, for Python): built once per interpreter and module list (rebuilt when a
  bundled file changes) under perflab's home, activated by putting its folder first on
  ``PYTHONPATH`` (its ``sitecustomize`` installs the finder), so it reaches every process,
  including Parsl's interchange, pool manager and ``multiprocessing``-spawned workers.
* ``trim_path``: drop ``sys.path`` entries that do not exist (each costs a stat per import).

The bundle is built in the caller (before the run), never inside the measured tree.
"""

from __future__ import annotations

import hashlib
import os
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import perflab
from perflab.errors import PerflabError
from perflab.factors.kinds import FACTOR_KINDS
from perflab.factors.kinds.base import FactorKind, expect_table
from perflab.files import home_dir
from perflab.spec import RunSpec

KEYS = {"bundle", "trim_path"}


@FACTOR_KINDS.register
class StartupKind(FactorKind):
    name = "startup"
    for_commands = True

    def parse(self, factor: str, key: str, value: Any, where: str, base_dir: Path) -> Any:
        table = expect_table(value, where, key)
        unknown = sorted(set(table) - KEYS)
        if unknown:
            raise PerflabError(f"{where}: `startup` has no key {', '.join(unknown)}")
        mods = table.get("bundle", [])
        if not isinstance(mods, list) or not all(isinstance(m, str) and m for m in mods):
            raise PerflabError(f"{where}: `startup.bundle` must be a list of module names")
        if not isinstance(table.get("trim_path", False), bool):
            raise PerflabError(f"{where}: `startup.trim_path` must be true or false")
        if not mods and not table.get("trim_path"):
            raise PerflabError(f"{where}: `startup` needs `bundle` or `trim_path = true`")
        return {"bundle": list(mods), "trim_path": bool(table.get("trim_path", False))}

    def apply(self, spec: RunSpec, key: str, value: Any) -> RunSpec:
        from perflab.factors.bundle import bundle_dir

        python = spec.python or sys.executable
        src = str(Path(perflab.__file__).resolve().parent.parent)
        # Build with the PYTHONPATH the run will have, so module origins match.
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(
            p for p in (spec.env.get("PYTHONPATH"), src, env.get("PYTHONPATH")) if p
        )
        ident = hashlib.sha256(f"{python}\0{value}\0{env['PYTHONPATH']}".encode()).hexdigest()
        folder = bundle_dir(
            python,
            value["bundle"],
            home_dir("bundles") / ident[:16],
            env,
            trim_path=value["trim_path"],
        )
        # First on the tree's PYTHONPATH (the run's own entries stay behind it).
        path = os.pathsep.join(p for p in (str(folder), spec.env.get("PYTHONPATH")) if p)
        return replace(spec, env={**spec.env, "PYTHONPATH": path})
