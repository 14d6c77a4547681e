"""``parsl_config``: the Parsl config file a run's engine loads, so "the system" is a factor.

    [factor.system_slurm]
    category = "environment"
    parsl_config = "htex_slurm.py"       # relative to the catalog file
    conflicts = ["system_local"]

Two such factors (one per config file: a SlurmProvider and a LocalProvider, two clusters'
settings) are two levels of the environment a run sees; the record's ``env.runner`` and
``env.parsl`` say which provider and scheduler it used. The file is code: only a catalog the
user trusts may name one, as with ``--parsl-config``. Its text is kept in the campaign.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from perflab.errors import PerflabError
from perflab.factors.kinds import FACTOR_KINDS
from perflab.factors.kinds.base import FactorKind
from perflab.spec import RunSpec


@FACTOR_KINDS.register
class SystemKind(FactorKind):
    name = "system"
    keys = ("parsl_config",)

    def parse(self, factor: str, key: str, value: Any, where: str, base_dir: Path) -> Any:
        if not isinstance(value, str) or not value.endswith(".py"):
            raise PerflabError(f"{where}: `parsl_config` must name a Python file (*.py)")
        return str((base_dir / value).resolve())

    def check(self, value: str, where: str) -> None:
        if not Path(value).is_file():
            raise PerflabError(f"{where}: parsl_config {value} does not exist")

    def apply(self, spec: RunSpec, key: str, value: Any) -> RunSpec:
        return replace(spec, parsl_config=value)
