"""Change points over a sequence of releases: candidates by penalised segmentation
(ruptures' PELT), each then confirmed, or not, by the gate on the two releases around it."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from perflab.analysis.stats import bonferroni_level, chi2_ppf
from perflab.compare.stats import HIGHER_IS_BETTER, Decision, decide


@dataclass
class ChangePoint:
    """A step between release ``before`` and release ``after`` (adjacent in the order given)."""

    index: int
    before: str
    after: str
    decision: Decision
    confirmed: bool

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "decision": self.decision.to_dict()}


def candidates(samples: Sequence[Sequence[float]], penalty: float | None = None) -> list[int]:
    """Indices i where a step between version i-1 and i is proposed.

    Each version's mean log value is standardised by its own standard error (pooled noise
    when a version has one run), so PELT's L2 cost is in units of noise and the BIC-like
    default penalty 2·log(k) does not depend on how fast the benchmark is.
    """
    import ruptures

    k = len(samples)
    if k < 2:
        return []
    logs = [np.log(np.asarray(s, float)) for s in samples]
    resid = np.concatenate([x - x.mean() for x in logs if len(x) > 1] or [np.zeros(1)])
    dof = sum(len(x) - 1 for x in logs if len(x) > 1)
    sigma = float(math.sqrt((resid**2).sum() / dof)) if dof > 0 else 0.0
    means = np.array([x.mean() for x in logs])
    n = np.array([len(x) for x in logs], float)
    se = sigma / np.sqrt(n.mean()) if sigma > 0 else 1.0
    signal = ((means - means.mean()) / (se if se > 0 else 1.0)).reshape(-1, 1)
    pen = chi2_ppf(0.99, 1) if penalty is None else penalty
    ends = ruptures.Pelt(model="l2", min_size=1, jump=1).fit(signal).predict(pen=pen)
    return [int(e) for e in ends[:-1]]


def change_points(
    labels: Sequence[str],
    samples: Sequence[Sequence[float]],
    metric: str,
    threshold: float = 0.05,
    alpha: float = 0.05,
    penalty: float | None = None,
    decided: Mapping[tuple[str, str], Decision] | None = None,
) -> list[ChangePoint]:
    """Candidates from PELT, each checked by the gate between the two releases around it; a
    candidate is ``confirmed`` when the gate says faster or slower (alpha is split over the
    k − 1 adjacent pairs that could have held a step).

    ``decided`` (``history --precision``): the steps' own sequential decisions, by (before,
    after), made at their looks' spent levels; a step stopped early is judged by its decision,
    not tested again on data its stopping rule chose, and one it found faster or slower is a
    change point whether PELT proposed it or not."""
    out = []
    level = bonferroni_level(alpha, len(labels) - 1)
    usable = [len(s) >= 2 for s in samples]
    found = set(candidates(samples, penalty))
    for i in range(1, len(labels)):
        d = (decided or {}).get((labels[i - 1], labels[i]))
        if d is not None and d.different:
            found.add(i)
    for i in sorted(found):
        if not (usable[i - 1] and usable[i]):
            continue
        dec = (decided or {}).get((labels[i - 1], labels[i])) or decide(
            samples[i - 1], samples[i], threshold, level, metric in HIGHER_IS_BETTER
        )
        out.append(ChangePoint(i, labels[i - 1], labels[i], dec, dec.different))
    return out
