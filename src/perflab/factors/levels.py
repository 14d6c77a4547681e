"""Level lists of numeric factors for sweeps: ``name=1..4``, ``name=1..16*2``, ``name=0|10|100``.

| text | levels |
|---|---|
| ``name`` | the catalog's own levels (they must be numbers) |
| ``name=a..b`` | a, a+1, …, b |
| ``name=a..b:s`` | a, a+s, …, ≤ b |
| ``name=a..b*f`` | a, a·f, a·f², …, ≤ b (geometric, f > 1, a > 0) |
| ``name=x|y|z`` | exactly these |
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from typing import Any, Protocol

from perflab.errors import PerflabError


class _Factor(Protocol):
    """What a sweep needs of a catalog's factor (``factors.catalog.Factor``)."""

    @property
    def numeric(self) -> bool: ...

    @property
    def levels(self) -> Sequence[Any] | None: ...


class _Catalog(Protocol):
    def get(self, name: str) -> _Factor: ...


RANGE_RE = re.compile(r"^(?P<a>[^.][^:*]*?)\.\.(?P<b>[^:*]+)(?:(?P<op>[:*])(?P<s>.+))?$")
MAX_LEVELS = 1000


def is_number(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool)


def number(raw: str) -> int | float | None:
    """``"4"`` -> 4, ``"0.5"`` -> 0.5, ``"1e3"`` -> 1000; None if not a finite number."""
    try:
        value = float(raw)
    except ValueError:
        return None
    if not math.isfinite(value):
        return None
    return int(value) if value.is_integer() else value


def sweep_levels(text: str, catalog: _Catalog) -> tuple[str, list[int | float]]:
    """Parse one sweep factor; errors name it (non-numeric factor, empty or bad range)."""
    name, sep, raw = (p.strip() for p in text.partition("="))
    factor = catalog.get(name)
    if not factor.numeric:
        raise PerflabError(
            f"sweep factor {name!r} is not numeric (a sweep needs numeric `levels` or a "
            "`range` in its catalog entry)"
        )
    if not sep:
        if not factor.levels:
            raise PerflabError(f"sweep factor {name!r} has a range, not levels: give {name}=a..b")
        levels: list[int | float] = list(factor.levels)
    elif "|" in raw or ".." not in raw:
        levels = [_num(x, text) for x in raw.split("|")]
    else:
        levels = _range(raw, text)
    if not levels:
        raise PerflabError(f"sweep factor {text!r}: the range is empty")
    if len(set(levels)) != len(levels):
        raise PerflabError(f"sweep factor {text!r}: a level repeats")
    return name, levels


def _num(raw: str, text: str) -> int | float:
    value = number(raw.strip())
    if value is None:
        raise PerflabError(f"sweep factor {text!r}: {raw.strip()!r} is not a number")
    return value


def _range(raw: str, text: str) -> list[int | float]:
    m = RANGE_RE.match(raw)
    if not m:
        raise PerflabError(f"sweep factor {text!r}: expected a..b, a..b:step or a..b*factor")
    a, b = _num(m["a"], text), _num(m["b"], text)
    op, step = m["op"], _num(m["s"], text) if m["s"] else 1
    if b < a:
        raise PerflabError(f"sweep factor {text!r}: the range is empty ({a:g} > {b:g})")
    out: list[int | float] = []
    if op == "*":
        if a <= 0 or step <= 1:
            raise PerflabError(f"sweep factor {text!r}: a geometric range needs a > 0, factor > 1")
        x: float = a
        # 4 significant digits (316.2, not 316.23446801367), compared after rounding so that
        # 100..1000*3.1623 ends at 1000
        while (shown := float(f"{x:.4g}")) <= b * (1 + 1e-9) and len(out) <= MAX_LEVELS:
            out.append(_tidy(shown))
            x *= step
    else:
        if step <= 0:
            raise PerflabError(f"sweep factor {text!r}: the step must be positive")
        i = 0
        while a + i * step <= b * (1 + 1e-12) + 1e-12 and len(out) <= MAX_LEVELS:
            out.append(_tidy(a + i * step))
            i += 1
    if len(out) > MAX_LEVELS:
        raise PerflabError(f"sweep factor {text!r}: more than {MAX_LEVELS} levels")
    return out


def _tidy(x: float) -> int | float:
    """Integral levels print as integers (workers=4, not workers=4.0); others to 12 digits."""
    r = round(x, 12)
    return int(r) if float(r).is_integer() else r
