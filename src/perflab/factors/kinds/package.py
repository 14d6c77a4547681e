"""``package``: other versions of packages, installed into a private cached venv.

    [factor.parsl_release]
    category = "environment"
    levels = ["2024.6.3", "2025.6.2"]
    package = { parsl = "{level}" }

The run's interpreter (this one, or an interpreter factor's) gets a venv holding exactly these
versions, and the target's other packages at the versions installed here. The venv is built
once and reused; a version that does not install is bad input, reported before any run.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from perflab.errors import PerflabError
from perflab.factors.kinds import FACTOR_KINDS
from perflab.factors.kinds.base import FactorKind, expect_table
from perflab.factors.requirements import check_requirement, requirement_name
from perflab.spec import RunSpec


@FACTOR_KINDS.register
class PackageKind(FactorKind):
    name = "package"
    #: A black-box command finds the venv's `python` first on PATH.
    for_commands = True

    def parse(self, factor: str, key: str, value: Any, where: str, base_dir: Path) -> Any:
        table = expect_table(value, where, key)
        if not table:
            raise PerflabError(f"{where}: `package` names no package")
        for name, version in table.items():
            if not isinstance(version, str | int | float) or str(version) == "":
                raise PerflabError(f"{where}: `package.{name}` must be a version")
        return {str(k): str(v) for k, v in table.items()}

    def apply(self, spec: RunSpec, key: str, value: Any) -> RunSpec:
        """``{name: version}`` (a catalog's), or a list of requirements as a compare side
        gives them (``NAME``, ``NAME>=V``, a source tree); each replaces one of its name."""
        reqs = value if isinstance(value, list) else [f"{n}=={v}" for n, v in value.items()]
        packages = list(spec.packages)
        for req in map(check_requirement, reqs):
            packages = [r for r in packages if requirement_name(r) != requirement_name(req)]
            packages.append(req)
        return replace(spec, packages=packages)
