"""The preparation stage, between the catalog (``factors``: a spec in, a spec out) and the
run (``run``): private venvs and interpreters, transformed and patched trees, and the
environment a measured tree starts with. One entry point, ``prepare(spec) -> Prepared``."""

from perflab.prepare.stage import Prepared, prepare

__all__ = ["Prepared", "prepare"]
