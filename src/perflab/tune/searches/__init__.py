"""Tune's searches: one module per search, each registering a ``Search`` subclass in
``SEARCHES`` under its ``name`` (``perflab tune --search NAME``); modules are discovered, so
a new search is one new file. Installed distributions add searches through the entry-point
group ``perflab.search``."""

from perflab.registry import Registry
from perflab.tune.final import Search

SEARCHES: Registry[type[Search]] = Registry("search", __name__)

#: The search ``perflab tune`` uses unless told: bench/best_set.py found optuna within 5% of
#: the optimum more often than staged, at 100 and at 300 runs.
DEFAULT_SEARCH = "optuna"

__all__ = ["DEFAULT_SEARCH", "SEARCHES", "Search"]
