"""What the A/B benches share: a paired ratio printed with its interval."""

from __future__ import annotations

import math
from collections.abc import Sequence

from perflab.compare.stats import paired_ratio


def ratio_text(ratios: Sequence[float], confidence: float = 0.95) -> str:
    """``1.052 (95% CI 0.951-1.164)``: geometric mean of B/A over the pairs, t interval."""
    m, lo, hi = paired_ratio(ratios, confidence)
    if math.isnan(lo):
        return f"{m:.3f} (one pair: no interval)"
    return f"{m:.3f} ({confidence:.0%} CI {lo:.3f}-{hi:.3f})"
