"""``label = true``: a factor with no effect of perflab's own — only its name (and level) is
passed on in ``PERFLAB_TREATMENTS``, for a black-box command (or a workload) to interpret.

    [factor.algo]
    label = true
    category = "source_keep"
    levels = ["fast", "slow"]
    conflicts = ["other_label"]
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from perflab.errors import PerflabError
from perflab.factors.kinds import FACTOR_KINDS
from perflab.factors.kinds.base import FactorKind
from perflab.spec import RunSpec


@FACTOR_KINDS.register
class LabelKind(FactorKind):
    name = "label"
    for_commands = True

    def parse(self, factor: str, key: str, value: Any, where: str, base_dir: Path) -> Any:
        if value is not True:
            raise PerflabError(f"{where}: `label` must be true (got {value!r})")
        return True

    def apply(self, spec: RunSpec, key: str, value: Any) -> RunSpec:
        """Nothing to do: the treatment's name is already in PERFLAB_TREATMENTS."""
        return spec
