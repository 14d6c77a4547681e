"""Treatment factors: the catalog model and one module per factor kind (``FACTOR_KINDS``)."""

from perflab.factors.base import FactorKind
from perflab.registry import Registry

FACTOR_KINDS: Registry[FactorKind] = Registry("factor kind")

from perflab.factors import (  # noqa: E402,F401
    config,
    env,
    interpreter,
    patch,
    workload,
    wrapper,
)

__all__ = ["FACTOR_KINDS", "FactorKind"]
