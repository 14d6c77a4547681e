"""The design interface: generate treatment sets over a list of two-level factors."""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from perflab.errors import PerflabError
from perflab.factors.catalog import DEFAULT_CATEGORY, Catalog
from perflab.options import Opt, check_options


def factor_name(treatment: str) -> str:
    return treatment.partition("=")[0]


class Constraints:
    """The catalog's conflicts and requires, restricted to a campaign's factors.

    Factors are treatment strings (``cfg_prefetch=100`` is one two-level factor).
    ``category`` is each factor's catalog category (how nice it is to apply); a factor the
    catalog does not know, or ``categories`` given by hand, say otherwise.
    """

    def __init__(
        self,
        factors: list[str],
        catalog: Catalog | None,
        categories: dict[str, str] | None = None,
    ) -> None:
        self.factors = factors
        self.category: dict[str, str] = dict.fromkeys(factors, DEFAULT_CATEGORY)
        self.conflicts: set[tuple[str, str]] = set()
        self.requires: set[tuple[str, str]] = set()
        by_name: dict[str, list[str]] = {}
        for f in factors:
            by_name.setdefault(factor_name(f), []).append(f)
        for f in factors:
            # Two levels of one factor exclude each other.
            for g in by_name[factor_name(f)]:
                if g != f:
                    self.conflicts.add(tuple(sorted((f, g))))  # type: ignore[arg-type]
            if catalog is None or factor_name(f) not in catalog:
                continue
            spec = catalog.get(factor_name(f))
            self.category[f] = spec.category
            for other in spec.conflicts:
                for g in by_name.get(other, []):
                    self.conflicts.add(tuple(sorted((f, g))))  # type: ignore[arg-type]
            for req in spec.requires:
                targets = by_name.get(req, [])
                if not targets:
                    raise PerflabError(f"factor {f!r} requires {req!r}, which the campaign lacks")
                # one level of the required factor is enough; with several, take the first
                self.requires.add((f, targets[0]))
        self.category.update(categories or {})

    def ok(self, chosen: set[str]) -> bool:
        if any(a in chosen and b in chosen for a, b in self.conflicts):
            return False
        return all(b in chosen for a, b in self.requires if a in chosen)

    def describe(self) -> list[str]:
        return [f"conflict({a}, {b})" for a, b in sorted(self.conflicts)] + [
            f"requires({a} -> {b})" for a, b in sorted(self.requires)
        ]


class Design:
    """Generates treatment sets. ``options`` declares the accepted options (``Opt``)."""

    name: ClassVar[str] = ""
    options: ClassVar[dict[str, Opt]] = {}

    def __init__(self, options: dict[str, Any] | None = None) -> None:
        self.opts = check_options(options or {}, self.options, f"design {self.name!r}")
        #: What the design wants remembered for analysis (e.g. the sequences' orders).
        self.info: dict[str, Any] = {}

    def expand(self, factors: list[str], catalog: Catalog) -> list[str]:
        """The campaign's factors as treatment strings (a sweep turns ``workers=1..4`` into
        one per level); called before anything is checked or stored."""
        return factors

    def generate(self, cons: Constraints, rng: np.random.Generator) -> list[list[str]]:
        raise NotImplementedError


def rows_to_sets(matrix: np.ndarray, factors: list[str]) -> list[list[str]]:
    """A ±1 (or 0/1) design matrix -> treatment sets (a factor is on where the entry is > 0)."""
    return [sorted(f for f, x in zip(factors, row, strict=True) if x > 0) for row in matrix]


def keep_valid(sets: list[list[str]], cons: Constraints, design: str) -> list[list[str]]:
    valid = [s for s in sets if cons.ok(set(s))]
    if not valid:
        raise PerflabError(f"design {design!r}: no set satisfies {'; '.join(cons.describe())}")
    return valid
