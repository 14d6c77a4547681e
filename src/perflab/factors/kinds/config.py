"""``config``: overrides on the engine's configuration (HTEX prefetch, logging, poll ...)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from perflab.factors.kinds import FACTOR_KINDS
from perflab.factors.kinds.base import FactorKind, expect_table
from perflab.spec import RunSpec


@FACTOR_KINDS.register
class ConfigKind(FactorKind):
    name = "config"
    keys = ("config",)

    def parse(self, factor: str, key: str, value: Any, where: str, base_dir: Path) -> Any:
        return expect_table(value, where, key)

    def apply(self, spec: RunSpec, key: str, value: Any) -> None:
        spec.engine_options.update(value)
