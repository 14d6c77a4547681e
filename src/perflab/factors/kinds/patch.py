"""``patch``: a unified diff applied to a private copy of an installed package.

    [factor.src_x]
    patch = { package = "parsl", diff = "patches/x.diff", version = "2026.10.26" }

``diff`` is relative to the catalog file; ``version`` pins the package version the patch was
made for (another installed version is refused before anything runs).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from perflab.errors import PerflabError
from perflab.factors.kinds import FACTOR_KINDS
from perflab.factors.kinds.base import FactorKind, expect_table
from perflab.factors.patching import check_patch
from perflab.spec import RunSpec


@FACTOR_KINDS.register
class PatchKind(FactorKind):
    name = "patch"

    def parse(self, factor: str, key: str, value: Any, where: str, base_dir: Path) -> Any:
        table = dict(expect_table(value, where, key))
        if not isinstance(table.get("package"), str) or not isinstance(table.get("diff"), str):
            raise PerflabError(f"{where}: `patch` needs `package` and `diff`")
        table["factor"] = factor
        table["diff"] = str((base_dir / table["diff"]).resolve())
        return table

    def check(self, value: dict[str, Any], where: str) -> None:
        check_patch(value["package"], Path(value["diff"]), value.get("version"), where)

    def apply(self, spec: RunSpec, key: str, value: Any) -> RunSpec:
        patch = {k: value[k] for k in ("package", "diff", "factor")}
        return replace(spec, patches=[*spec.patches, patch])
