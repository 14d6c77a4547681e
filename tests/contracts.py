"""Compare a JSON value against a golden copy by keys, types and numbers to a tolerance.

A golden contract pins what a user's script relies on: the keys, the kind of each value and
the numbers to a stated tolerance -- not the last bit of a BLAS sum, which differs between
CPUs (an AMD EPYC and an Intel Xeon disagree in the 17th digit of one analysis figure).
"""

from __future__ import annotations

import math
from typing import Any

#: Relative tolerance of every golden number (absolute below ABS, for values near zero).
REL = 1e-9
ABS = 1e-12


def _kind(v: Any) -> str:
    if isinstance(v, bool) or v is None:
        return type(v).__name__
    if isinstance(v, int | float):
        return "number"
    return type(v).__name__


def contract_diffs(actual: Any, golden: Any, path: str = "$") -> list[str]:
    """Every place where ``actual`` breaks the contract of ``golden`` (empty: it holds)."""
    if _kind(actual) != _kind(golden):
        return [f"{path}: {_kind(golden)} expected, got {_kind(actual)}"]
    if isinstance(golden, dict):
        out = [f"{path}.{k}: missing" for k in golden if k not in actual]
        out += [f"{path}.{k}: not in the golden copy" for k in actual if k not in golden]
        for k in golden.keys() & actual.keys():
            out += contract_diffs(actual[k], golden[k], f"{path}.{k}")
        return out
    if isinstance(golden, list):
        if len(actual) != len(golden):
            return [f"{path}: {len(golden)} items expected, got {len(actual)}"]
        pairs = enumerate(zip(actual, golden, strict=True))
        return [d for i, (a, g) in pairs for d in contract_diffs(a, g, f"{path}[{i}]")]
    if isinstance(golden, int | float) and not isinstance(golden, bool):
        if isinstance(golden, int) != isinstance(actual, int):
            return [f"{path}: {type(golden).__name__} expected, got {type(actual).__name__}"]
        a, g = float(actual), float(golden)
        if math.isnan(g) and math.isnan(a):
            return []
        if not math.isclose(a, g, rel_tol=REL, abs_tol=ABS):
            return [f"{path}: {golden!r} expected, got {actual!r} (rel {REL:g})"]
        return []
    return [] if actual == golden else [f"{path}: {golden!r} expected, got {actual!r}"]
