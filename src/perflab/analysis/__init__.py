"""Analysis: which treatments matter, how they interact, and the way from slow to fast."""

from perflab.analysis.core import analyze
from perflab.analysis.data import Dataset, from_frame, load
from perflab.analysis.deltas import deltas, set_means

__all__ = ["Dataset", "analyze", "deltas", "from_frame", "load", "set_means"]
