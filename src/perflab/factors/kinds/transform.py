"""``transform``: a source change by what it does, applied to whatever version a run uses.

    [factor.src_submit_biglogs_remove]
    transform = { package = "parsl", module = "parsl.dataflow.dflow",
                  op = "remove_log_calls", match = ["changing state from", ...] }

A list of such tables is one factor of several changes. The ops and selectors are in
``factors/transforms.py``; the private copy, its cache key and its diff in
``prepare/transformed.py``. The transform meets the source at run time (the release a run
uses may live in a venv built just before it), and a transform that matches nothing there
stops the run with the version and the selector named.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from perflab.errors import PerflabError
from perflab.factors.kinds import FACTOR_KINDS
from perflab.factors.kinds.base import FactorKind
from perflab.factors.transforms import parse_transform
from perflab.spec import RunSpec


@FACTOR_KINDS.register
class TransformKind(FactorKind):
    name = "transform"
    #: A black-box command's `python` is the run's interpreter (the venv's, first on PATH),
    #: and the transformed copy is first on its PYTHONPATH.
    for_commands = True

    def parse(self, factor: str, key: str, value: Any, where: str, base_dir: Path) -> Any:
        tables = value if isinstance(value, list) else [value]
        if not tables or not all(isinstance(t, dict) for t in tables):
            raise PerflabError(f"{where}: `transform` must be a table or a list of tables")
        for t in tables:
            parse_transform(t, where)  # refuse a malformed one when the catalog loads
        return [{**t, "factor": factor} for t in tables]

    def apply(self, spec: RunSpec, key: str, value: Any) -> RunSpec:
        return replace(spec, transforms=[*spec.transforms, *(dict(t) for t in value)])
