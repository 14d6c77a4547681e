"""Stand-ins for a comparison's side preparation, for tests that must not build a venv."""

from __future__ import annotations

import sys

from perflab.prepare import Prepared
from perflab.spec import RunSpec


def unbuilt(spec: RunSpec) -> Prepared:
    """``prepare`` without the venv: the spec as it is, run by this interpreter."""
    return Prepared(spec=spec, python=sys.executable)


class CountingPrepare:
    """``prepare`` (or ``unbuilt``) that counts its calls per spec's label: how often each
    side of a comparison was made ready."""

    def __init__(self, real: object = unbuilt) -> None:
        self.real = real
        self.calls: list[RunSpec] = []

    def __call__(self, spec: RunSpec) -> Prepared:
        self.calls.append(spec)
        out: Prepared = self.real(spec)  # type: ignore[operator]
        return out
