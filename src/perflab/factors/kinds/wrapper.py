"""``wrapper``: how the processes are scheduled.

* ``nice = N`` and ``policy = "batch"|"idle"`` wrap the whole tree (``nice``, ``chrt``);
* ``cpus = "0-1"`` pins the whole tree (``taskset``);
* ``affinity = "roles"`` pins each HTEX role to its own cores, an 8-thread scheme scaled to the
  cores present (see ``perflab.engines.affinity``).
"""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path
from typing import Any

from perflab.errors import PerflabError
from perflab.factors.kinds import FACTOR_KINDS
from perflab.factors.kinds.base import LEVEL, FactorKind, expect_table
from perflab.spec import RunSpec

POLICIES = {"batch": "--batch", "idle": "--idle", "other": "--other"}
AFFINITY_SCHEMES = ("roles",)
CPU_LIST = re.compile(r"^\d+(-\d+)?(,\d+(-\d+)?)*$")


@FACTOR_KINDS.register
class WrapperKind(FactorKind):
    name = "wrapper"
    for_commands = True

    def parse(self, factor: str, key: str, value: Any, where: str, base_dir: Path) -> Any:
        table = expect_table(value, where, key)
        unknown = set(table) - {"nice", "policy", "cpus", "affinity"}
        if unknown:
            raise PerflabError(f"{where}: unknown wrapper setting {', '.join(sorted(unknown))}")
        # A "{level}" value is checked once the level is known (in apply).
        check_wrapper({k: v for k, v in table.items() if LEVEL not in str(v)}, where)
        return table

    def apply(self, spec: RunSpec, key: str, value: Any) -> RunSpec:
        check_wrapper(value, "wrapper")
        prefix: list[str] = []
        if "cpus" in value:
            prefix += ["taskset", "-c", str(value["cpus"])]
        if "policy" in value:
            prefix += ["chrt", POLICIES[value["policy"]], "0"]
        if "nice" in value:
            prefix += ["nice", "-n", str(int(value["nice"]))]
        spec = replace(spec, wrapper=prefix + spec.wrapper)
        if "affinity" in value:
            spec = replace(
                spec, engine_options={**spec.engine_options, "affinity": value["affinity"]}
            )
        return spec


def check_wrapper(table: dict[str, Any], where: str) -> None:
    """Refuse settings that ``nice``/``chrt``/``taskset`` would reject at run time."""
    nice = table.get("nice", 0)
    if isinstance(nice, bool) or not isinstance(nice, int) or not -20 <= nice <= 19:
        raise PerflabError(f"{where}: nice must be an integer from -20 to 19 (got {nice!r})")
    policy = table.get("policy")
    if "policy" in table and not (isinstance(policy, str) and policy in POLICIES):
        raise PerflabError(f"{where}: policy must be one of {', '.join(POLICIES)}")
    cpus = table.get("cpus")
    if "cpus" in table and not (isinstance(cpus, str | int) and CPU_LIST.match(str(cpus))):
        raise PerflabError(f"{where}: cpus must be a CPU list like 0-1,3 (got {cpus!r})")
    if "affinity" in table and table["affinity"] not in AFFINITY_SCHEMES:
        raise PerflabError(f"{where}: affinity must be one of {', '.join(AFFINITY_SCHEMES)}")
