"""Engines: one module per task system, each registering itself in ``ENGINES``."""

from perflab.engines.base import Engine
from perflab.registry import Registry

ENGINES: Registry[type[Engine]] = Registry("engine")

# Importing registers; the engines import their task system lazily in start().
from perflab.engines import cf, dask_local, parsl_htex, parsl_threads  # noqa: E402,F401

__all__ = ["ENGINES", "Engine"]
