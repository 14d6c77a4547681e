"""``env``: environment variables of the measured tree; ``rundir``: where the run directory
(and so Parsl's run_dir and every log file) lives, e.g. tmpfs ``/dev/shm`` vs disk."""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path
from typing import Any

from perflab.errors import PerflabError
from perflab.factors.kinds import FACTOR_KINDS
from perflab.factors.kinds.base import FactorKind, expect_table
from perflab.spec import RunSpec


@FACTOR_KINDS.register
class EnvKind(FactorKind):
    name = "env"
    keys = ("env", "rundir")
    for_commands = True

    def parse(self, factor: str, key: str, value: Any, where: str, base_dir: Path) -> Any:
        if key == "rundir":
            if not isinstance(value, str) or not os.path.isabs(value):
                raise PerflabError(f"{where}: `rundir` must be an absolute path")
            return value
        table = expect_table(value, where, key)
        return {str(k): str(v) for k, v in table.items()}

    def apply(self, spec: RunSpec, key: str, value: Any) -> RunSpec:
        if key == "rundir":
            # one per user: a shared name could be pre-created by anyone (private_dir
            # refuses a directory that is not the user's own)
            return replace(spec, run_root=os.path.join(value, f"perflab-{os.geteuid()}"))
        # a level substituted for a whole value keeps its own type (300, not "300")
        return replace(spec, env={**spec.env, **{k: str(v) for k, v in value.items()}})
