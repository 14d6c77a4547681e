"""Workloads: one module per kind of task, each registering itself in ``WORKLOADS``."""

from perflab.registry import Registry
from perflab.workloads.base import Workload

WORKLOADS: Registry[type[Workload]] = Registry("workload")

from perflab.workloads import basic, probe  # noqa: E402,F401

__all__ = ["WORKLOADS", "Workload"]
