"""``config``: overrides on the engine's configuration (HTEX prefetch, logging, poll ...)."""

from __future__ import annotations

from perflab.factors.kinds import FACTOR_KINDS
from perflab.factors.kinds.base import TableKind


@FACTOR_KINDS.register
class ConfigKind(TableKind):
    name = "config"
    field = "engine_options"
