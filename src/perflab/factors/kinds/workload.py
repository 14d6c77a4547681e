"""``workload``: workload parameter changes (argument size, task duration)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from perflab.factors.kinds import FACTOR_KINDS
from perflab.factors.kinds.base import FactorKind, expect_table
from perflab.spec import RunSpec


@FACTOR_KINDS.register
class WorkloadKind(FactorKind):
    name = "workload"
    keys = ("workload",)

    def parse(self, factor: str, key: str, value: Any, where: str, base_dir: Path) -> Any:
        return expect_table(value, where, key)

    def apply(self, spec: RunSpec, key: str, value: Any) -> RunSpec:
        return replace(spec, params={**spec.params, **value})
