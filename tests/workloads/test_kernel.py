"""The calibrated compute kernel (workloads/kernel.py)."""

from __future__ import annotations

from perflab.workloads.kernel import calibrate


def test_calibration_gives_a_positive_rate_for_each_kernel() -> None:
    assert calibrate("hash") > 0 and calibrate("spin") > 0
