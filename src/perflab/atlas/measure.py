"""How the atlas measures a benchmark at a point: ``Measurer`` is one run of a point, and the
paired gate between two points. ``RealMeasurer`` builds each commit's tree once (``git
archive`` into perflab's cache, as bisect does) and runs through ``prepare`` and
``run.measure``; the gate is ``compare``'s (``bisect.driver.compare_points``).
``Simulated`` is the same interface on declared costs, for the tests of the atlas's own logic
and for the false-alarm bench."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from perflab.atlas.project import Benchmark
from perflab.errors import PerflabError
from perflab.prepare import Prepared
from perflab.run.record import RunRecord
from perflab.spec import RunSpec


class Failed(Exception):
    """Point ``key`` did not build (``kind`` "build") or its run failed ("run")."""

    def __init__(self, key: str, kind: str, reason: str) -> None:
        super().__init__(reason)
        self.key, self.kind, self.reason = key, kind, reason


class Measurer(Protocol):
    def run(self, bench: Benchmark, key: str) -> float:
        """One run of ``bench`` at point ``key``: its metric's value (Failed if none)."""

    def compare(self, bench: Benchmark, a: str, b: str, level: float, min_effect: float,
                n_max: int | None = None) -> dict[str, Any]:  # fmt: skip
        """The paired gate of point ``a`` (baseline) against ``b`` at ``level``, from
        ``bench.runs`` to ``n_max`` runs a side (default 3 × runs): ratio, low, high,
        verdict, runs (both sides), level."""

    def revert(self, bench: Benchmark, key: str, transforms: list[dict[str, Any]], level: float,
               min_effect: float) -> dict[str, Any]:  # fmt: skip
        """The paired gate of point ``key`` as it is (baseline) against ``key`` with
        ``transforms`` applied (a hunk group reverted): as ``compare``'s result."""


@dataclass
class RealMeasurer:
    repo: Path
    package: str
    build: str = "tree"
    _ready: dict[tuple[str, str], Prepared] = field(default_factory=dict)

    def prepared(self, bench: Benchmark, key: str) -> Prepared:
        """The run of ``bench`` at commit ``key``, its tree built (once): Failed if it
        does not build."""
        from perflab.prepare import prepare

        if (bench.name, key) not in self._ready:
            spec = self.spec(bench, key)
            try:
                self._ready[bench.name, key] = prepare(spec)
            except (PerflabError, OSError) as exc:  # OSError: a tree that cannot be copied
                raise Failed(key, "build", f"does not build: {exc}") from None
        return self._ready[bench.name, key]

    def spec(self, bench: Benchmark, key: str) -> RunSpec:
        """The spec of ``bench`` at commit ``key`` (its tree as the package's source), before
        ``prepare``: what a runner elsewhere prepares and measures."""
        from perflab.bisect.commits import tree
        from perflab.compare.sides import side_spec
        from perflab.factors.sources import tree_package
        from perflab.files import home_dir

        base = bench.spec()
        try:
            src = tree(self.repo, key, home_dir("bisect", "trees"))
            tree_package(src, self.package)
        except (PerflabError, OSError) as exc:
            raise Failed(key, "build", f"does not build: {exc}") from None
        if self.build == "tree":
            return replace(base, sources={**base.sources, self.package: str(src)})
        return side_spec(base, source=str(src))

    def run(self, bench: Benchmark, key: str) -> float:
        from perflab.run.measure import measure

        return value_of(measure(self.prepared(bench, key)), bench, key)

    def compare(self, bench: Benchmark, a: str, b: str, level: float, min_effect: float,
                n_max: int | None = None) -> dict[str, Any]:  # fmt: skip
        from perflab.compare.gate import Side

        sides = [Side(k[:10], self.prepared(bench, k).spec, prepared=self.prepared(bench, k))
                 for k in (a, b)]  # fmt: skip
        return self._gate(bench, sides, (a, b), level, min_effect, n_max)

    def revert(self, bench: Benchmark, key: str, transforms: list[dict[str, Any]], level: float,
               min_effect: float) -> dict[str, Any]:  # fmt: skip
        from perflab.compare.gate import Side
        from perflab.prepare import prepare

        ready = self.prepared(bench, key)
        try:
            reverted = prepare(replace(ready.spec, transforms=[*ready.spec.transforms,
                                                                *transforms]))  # fmt: skip
        except PerflabError as exc:
            raise Failed(key, "build", str(exc)) from None
        sides = [Side(key[:10], ready.spec, prepared=ready),
                 Side("reverted", reverted.spec, prepared=reverted)]  # fmt: skip
        return self._gate(bench, sides, (key, key), level, min_effect, None)

    def _gate(self, bench: Benchmark, sides: list[Any], keys: tuple[str, str], level: float,
              min_effect: float, n_max: int | None) -> dict[str, Any]:  # fmt: skip
        from perflab.bisect.driver import Settings, compare_points

        settings = Settings(bench.metric, threshold=min_effect, n_min=bench.runs,
                            n_max=n_max or 3 * bench.runs)  # fmt: skip
        cmp = compare_points(sides[0], sides[1], settings, level)
        if cmp.failed is not None:
            mine = any(r.run_id == cmp.failed.run_id for r in sides[0].records)
            which = keys[0] if mine else keys[1]
            raise Failed(which, "run", f"run {cmp.failed.run_id} failed in the gate")
        d = cmp.decision
        assert d is not None
        return {"ratio": d.ratio, "low": d.ci_low, "high": d.ci_high, "verdict": d.verdict,
                "runs": len(sides[0].values) + len(sides[1].values), "level": level,
                "test": cmp.test}  # fmt: skip


def value_of(rec: RunRecord, bench: Benchmark, key: str) -> float:
    """The benchmark's metric from a run's record at point ``key``; Failed when the run
    failed or gave no positive, finite value."""
    from perflab.compare.gate import metric_value

    value = metric_value(rec, bench.metric) if rec.status == "ok" else None
    if value is None or not value > 0 or not math.isfinite(value):
        lines = [ln for ln in (rec.error or "").splitlines() if ln.strip()]
        why = lines[-1] if lines else "no value of " + bench.metric
        raise Failed(key, "run", f"run {rec.run_id} failed: {why}")
    return float(value)


@dataclass
class Simulated:
    """Runs whose true value is ``cost(key)``, times seeded log-normal noise and a slow drift
    of the machine; ``broken`` keys do not build; ``failing``: every run fails."""

    cost: Callable[[str], float]
    sigma: float = 0.02
    seed: int = 0
    broken: frozenset[str] = frozenset()
    failing: bool = False
    #: The true value of a point with transforms applied (a hunk group reverted); default:
    #: the point's own (a revert that changes nothing).
    reverted: Callable[[str, list[dict[str, Any]]], float] | None = None
    clock: list[float] = field(default_factory=lambda: [0.0])

    def __post_init__(self) -> None:
        self.rng = np.random.default_rng(self.seed)

    def _one(self, key: str, transforms: list[dict[str, Any]] | None = None) -> float:
        if key in self.broken:
            raise Failed(key, "build", "does not build: planted")
        if self.failing:
            raise Failed(key, "run", "the command exited 1")
        self.clock[0] += 1
        drift = 0.03 * math.sin(self.clock[0] / 37.0)
        cost = (self.reverted(key, transforms) if transforms and self.reverted
                else self.cost(key))  # fmt: skip
        return float(cost * math.exp(drift + self.rng.normal(0.0, self.sigma)))

    def revert(self, bench: Benchmark, key: str, transforms: list[dict[str, Any]], level: float,
               min_effect: float) -> dict[str, Any]:  # fmt: skip
        from perflab.compare.stats import sequential

        d, xa, xb = sequential(lambda: self._one(key), lambda: self._one(key, transforms),
                               bench.runs, 3 * bench.runs, min_effect, level)  # fmt: skip
        return {"ratio": d.ratio, "low": d.ci_low, "high": d.ci_high, "verdict": d.verdict,
                "runs": len(xa) + len(xb), "level": level, "test": "paired t"}  # fmt: skip

    def run(self, bench: Benchmark, key: str) -> float:
        return self._one(key)

    def compare(self, bench: Benchmark, a: str, b: str, level: float, min_effect: float,
                n_max: int | None = None) -> dict[str, Any]:  # fmt: skip
        from perflab.compare.stats import sequential

        d, xa, xb = sequential(lambda: self._one(a), lambda: self._one(b), bench.runs,
                               n_max or 3 * bench.runs, min_effect, level)  # fmt: skip
        return {
            "ratio": d.ratio,
            "low": d.ci_low,
            "high": d.ci_high,
            "verdict": d.verdict,
            "runs": len(xa) + len(xb),
            "level": level,
            "test": "paired t",
        }
