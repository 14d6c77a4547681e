"""``config``: overrides on the engine's configuration (HTEX prefetch, logging, poll ...)."""

from __future__ import annotations

from dataclasses import replace
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

    def apply(self, spec: RunSpec, key: str, value: Any) -> RunSpec:
        return replace(spec, engine_options={**spec.engine_options, **value})
