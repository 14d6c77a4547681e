"""Designs: one module per way of choosing treatment sets, each registered in ``DESIGNS``."""

from perflab.designs.base import Constraints, Design
from perflab.registry import Registry

DESIGNS: Registry[type[Design]] = Registry("design")

from perflab.designs import (  # noqa: E402,F401
    balanced,
    explicit,
    fractional,
    full,
    random_sets,
    sequences,
)

__all__ = ["DESIGNS", "Constraints", "Design"]
