"""``workload``: workload parameter changes (argument size, task duration)."""

from __future__ import annotations

from perflab.factors.kinds import FACTOR_KINDS
from perflab.factors.kinds.base import TableKind


@FACTOR_KINDS.register
class WorkloadKind(TableKind):
    name = "workload"
    field = "params"
