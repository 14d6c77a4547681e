"""Synthetic performance truths for judging best-set searches (bench/best_set.py, tests).

Each truth has 17 to 20 candidate treatments (including a 4-level factor as three exclusive level
columns ``L=1..3``; level 0 is "off"), a noise-free time ``T(X)`` for 0/1 rows ``X``, a
catalog category per factor (for the nice levels), and a noisy measurement: multiplicative
log-normal noise plus rare outliers (1% of runs 1.5–3×, or exactly ``outlier_x``), and on
the real-machine truths a slow drift over the campaign (``drift``: the log time rises by
this much per 100 runs; ``campaign`` keeps the clock).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from perflab.analysis import synthetic
from perflab.campaign.designs.base import Constraints
from perflab.factors.catalog import CATEGORIES

NULLS = [f"n{j:02d}" for j in range(20)]
TRAP_FACTORS = ["a", "b", "c", "d", "s", "h", "L=1", "L=2", "L=3", *NULLS[:11]]


@dataclass
class Truth:
    name: str
    factors: list[str]
    time: Callable[[np.ndarray], np.ndarray]
    categories: dict[str, str]
    noise: float = 0.04
    drift: float = 0.0
    outlier_x: float = 0.0  # 0: outliers 1.5-3x at random

    def campaign(self, rng: np.random.Generator) -> Callable[[list[list[str]]], np.ndarray]:
        """``measure`` with a clock: each call's runs come after the last call's (drift)."""
        clock = [0]

        def run(sets: list[list[str]]) -> np.ndarray:
            ys = self.measure(sets, rng, clock[0])
            clock[0] += len(sets)
            return ys

        return run

    @property
    def cons(self) -> Constraints:
        return Constraints(self.factors, None, self.categories)

    def renamed(self) -> tuple[dict[str, str], Constraints]:
        """Every factor renamed so the names sort the other way, and the constraints under
        the new names with the candidates reversed: the invariance tests' second view."""
        rename = {f: f"q{99 - j:02d}" for j, f in enumerate(self.factors)}
        cons = Constraints(
            [rename[f] for f in reversed(self.factors)],
            None,
            {rename[f]: c for f, c in self.categories.items()},
        )
        cons.conflicts = {tuple(sorted(rename[f] for f in p)) for p in self.cons.conflicts}  # type: ignore[misc]
        return rename, cons

    def matrix(self, sets: list[list[str]]) -> np.ndarray:
        idx = {f: j for j, f in enumerate(self.factors)}
        x = np.zeros((len(sets), len(self.factors)))
        for i, s in enumerate(sets):
            for f in s:
                x[i, idx[f]] = 1
        return x

    def measure(self, sets: list[list[str]], rng: np.random.Generator, at: int = 0) -> np.ndarray:
        """Noisy times of ``sets``, run in order from the campaign's run ``at`` on."""
        t = self.time(self.matrix(sets)) * np.exp(self.drift * (at + np.arange(len(sets))) / 100)
        noisy = t * np.exp(rng.normal(0, self.noise, len(t)))
        outlier = rng.random(len(t)) < 0.01
        x = rng.uniform(1.5, 3.0, len(t)) if not self.outlier_x else self.outlier_x
        return np.where(outlier, noisy * x, noisy)

    def all_valid(self) -> np.ndarray:
        """Every valid 0/1 row (the level columns exclusive), for the true optimum."""
        k = len(self.factors)
        lv = [j for j, f in enumerate(self.factors) if "=" in f]
        free = [j for j in range(k) if j not in lv]
        grid = ((np.arange(1 << len(free))[:, None] >> np.arange(len(free))) & 1).astype(float)
        blocks = []
        for choice in [None, *lv]:
            x = np.zeros((len(grid), k))
            x[:, free] = grid
            if choice is not None:
                x[:, choice] = 1
            blocks.append(x)
        return np.vstack(blocks)

    def optimum(self, level: str = CATEGORIES[-1]) -> float:
        """The fastest true time of a valid set using only categories up to ``level``."""
        x = self.all_valid()
        top = CATEGORIES.index(level)
        barred = [
            j for j, f in enumerate(self.factors) if CATEGORIES.index(self.categories[f]) > top
        ]
        x = x[~x[:, barred].any(axis=1)] if barred else x
        return float(min(self.time(x[i : i + 65536]).min() for i in range(0, len(x), 65536)))

    def unneeded(self, chosen: list[str]) -> list[str]:
        """Members of ``chosen`` whose removal does not make the true time slower (a factor
        that does nothing, or harms, in this set)."""
        t = self.time(self.matrix([chosen]))[0]
        return [
            f for f in chosen if self.time(self.matrix([[g for g in chosen if g != f]]))[0] <= t
        ]


def _col(x: np.ndarray, factors: list[str], f: str) -> np.ndarray:
    return x[:, factors.index(f)]


def _traps(x: np.ndarray) -> np.ndarray:
    """Additive: an either-or pair (a, b), a helper c, a small d, a harmful h, a 4-level L,
    and s, which helps slow sets (-150) but hurts near the optimum (+60)."""
    c = lambda f: _col(x, TRAP_FACTORS, f)  # noqa: E731
    t = 1000 - 400 * c("a") - 300 * c("b") + 250 * c("a") * c("b") - 100 * c("c") - 40 * c("d")
    t = t + 80 * c("h") - 50 * c("L=1") - 120 * c("L=2") - 80 * c("L=3")
    return t + np.where(t > 600, -150.0, 60.0) * c("s")


def _multiplicative(x: np.ndarray) -> np.ndarray:
    """Each factor scales the time; the either-or pair and the state-dependent s as above."""
    c = lambda f: _col(x, TRAP_FACTORS, f)  # noqa: E731
    m = 0.6 ** c("a") * 0.7 ** c("b") * (1.35 ** (c("a") * c("b"))) * 0.9 ** c("c")
    m = m * 0.96 ** c("d") * 1.15 ** c("h") * 0.95 ** c("L=1") * 0.88 ** c("L=2") * 0.92 ** c("L=3")
    t = 1000 * m
    return t * np.where(t > 500, 0.85, 1.1) ** c("s")


GEN_FACTORS = [f"f{j:02d}" for j in range(17)] + ["L=1", "L=2", "L=3"]


def _generator(x: np.ndarray) -> np.ndarray:
    """perflab's own synthetic truth on 17 factors, plus the 4-level factor."""
    c = lambda f: _col(x, GEN_FACTORS, f)  # noqa: E731
    return synthetic.truth(x[:, :17]) - 50 * c("L=1") - 120 * c("L=2") - 80 * c("L=3")


def _cycle(factors: list[str], fixed: dict[str, str]) -> dict[str, str]:
    """Categories: ``fixed`` as given, the rest spread over the categories in turn."""
    return {f: fixed.get(f, CATEGORIES[j % len(CATEGORIES)]) for j, f in enumerate(factors)}


TRAP_CATEGORIES = _cycle(
    TRAP_FACTORS,
    {"a": "config_disable", "b": "source_remove", "c": "safe_config", "d": "environment",
     "s": "environment", "h": "safe_config", "L=1": "safe_config", "L=2": "safe_config",
     "L=3": "safe_config"},
)  # fmt: skip

SPARSE_FACTORS = [f"x{j}" for j in range(6)] + ["L=1", "L=2", "L=3"]
SPARSE_FACTORS += [f"n{j:02d}" for j in range(6)] + ["h0", "h1"]
SPARSE_EFFECTS = {"x0": 0.6, "x1": 0.75, "x2": 0.8, "x3": 0.85, "x4": 0.9, "x5": 0.9,
                  "L=1": 0.95, "L=2": 0.88, "L=3": 0.92, "h0": 1.05, "h1": 1.1}  # fmt: skip


def _sparse(x: np.ndarray) -> np.ndarray:
    """Six helpful factors (10–40 %), the 4-level L, six that do nothing and two that harm
    (+5 %, +10 %); x0 and x1 overlap (together 25 % less than both). 17 candidates."""
    c = lambda f: _col(x, SPARSE_FACTORS, f)  # noqa: E731
    m = np.ones(len(x))
    for f, eff in SPARSE_EFFECTS.items():
        m = m * eff ** c(f)
    return 1000 * m * 1.25 ** (c("x0") * c("x1"))


GROUP_FACTORS = [f"x{j}" for j in range(4)] + ["g", "L=1", "L=2", "L=3", "h0", "h1"]
GROUP_FACTORS += [f"n{j:02d}" for j in range(10)]
GROUP_EFFECTS = {"x0": 0.6, "x1": 0.75, "x2": 0.8, "x3": 0.85, "g": 0.93,
                 "L=1": 0.95, "L=2": 0.88, "L=3": 0.92, "h0": 1.05, "h1": 1.1}  # fmt: skip


def _grouped(x: np.ndarray) -> np.ndarray:
    """Four strong helpers (15–40 %), ``g`` worth 7 % (weak in a search's runs, so tried in
    one group with the do-nothing factors), the 4-level L, two harmful and ten that do
    nothing. 20 candidates."""
    c = lambda f: _col(x, GROUP_FACTORS, f)  # noqa: E731
    m = np.ones(len(x))
    for f, eff in GROUP_EFFECTS.items():
        m = m * eff ** c(f)
    return 1000 * m


GROUP_CATEGORIES = _cycle(
    GROUP_FACTORS,
    {"x0": "config_disable", "x1": "source_remove", "x2": "environment", "x3": "safe_config",
     "g": "source_keep", "L=1": "safe_config", "L=2": "safe_config", "L=3": "safe_config"},
)  # fmt: skip

EITHER_FACTORS = [f"x{j}" for j in range(4)] + ["e", "r", "L=1", "L=2", "L=3", "h0", "h1"]
EITHER_FACTORS += [f"n{j:02d}" for j in range(9)]


def _either(x: np.ndarray) -> np.ndarray:
    """Four strong helpers, an either-or pair (``e``, an environment variable, and ``r``, a
    source removal: each saves 20 %, both together no more than one), the 4-level L, two
    harmful and nine that do nothing. 20 candidates."""
    c = lambda f: _col(x, EITHER_FACTORS, f)  # noqa: E731
    m = np.ones(len(x))
    for f, eff in GROUP_EFFECTS.items():
        if f in EITHER_FACTORS:
            m = m * eff ** c(f)
    return 1000 * m * 0.8 ** np.maximum(c("e"), c("r"))


CANCEL_FACTORS = [f"x{j}" for j in range(4)] + ["g", "k", "L=1", "L=2", "L=3", "h0"]
CANCEL_FACTORS += [f"n{j:02d}" for j in range(10)]


def _cancel(x: np.ndarray) -> np.ndarray:
    """As ``grouped`` with ``k`` (+7 %) for ``h1``: a helpful ``g`` (-7 %) and a harmful
    ``k`` of the same size, both weak in a search's runs, so a group holding both cancels."""
    c = lambda f: _col(x, CANCEL_FACTORS, f)  # noqa: E731
    m = np.ones(len(x))
    for f, eff in {**GROUP_EFFECTS, "k": 1.07}.items():
        if f in CANCEL_FACTORS:
            m = m * eff ** c(f)
    return 1000 * m


TRUTHS = {
    "generator": Truth(
        "generator",
        GEN_FACTORS,
        _generator,
        _cycle(
            GEN_FACTORS,
            {
                "f00": "config_disable",
                "f01": "source_remove",
                "f02": "environment",
                "f03": "environment",
                "L=1": "safe_config",
                "L=2": "safe_config",
                "L=3": "safe_config",
            },
        ),  # fmt: skip
        noise=0.05,
    ),
    "traps": Truth("traps", TRAP_FACTORS, _traps, TRAP_CATEGORIES, noise=0.03),
    "multiplicative": Truth(
        "multiplicative", TRAP_FACTORS, _multiplicative, TRAP_CATEGORIES, noise=0.04
    ),
    "sparse": Truth(
        "sparse",
        SPARSE_FACTORS,
        _sparse,
        _cycle(
            SPARSE_FACTORS,
            {
                "x0": "config_disable",
                "x1": "source_remove",
                "x2": "environment",
                "x3": "safe_config",
                "x4": "source_keep",
                "L=1": "safe_config",
                "L=2": "safe_config",
                "L=3": "safe_config",
            },
        ),  # fmt: skip
        noise=0.04,
    ),
    # a helpful factor worth 7 % in the do-nothing group (issue 44)
    "grouped": Truth("grouped", GROUP_FACTORS, _grouped, GROUP_CATEGORIES, noise=0.04),
    # real machines: slow drift (+6 % per 100 runs) over the campaign
    "drift": Truth("drift", GROUP_FACTORS, _grouped, GROUP_CATEGORIES, noise=0.04, drift=0.06),
    # and rare 2x outliers (1 % of runs) on top of the drift
    "outliers": Truth(
        "outliers",
        GROUP_FACTORS,
        _grouped,
        GROUP_CATEGORIES,
        noise=0.04,
        drift=0.06,
        outlier_x=2.0,
    ),  # fmt: skip
    # two ways to the same saving: the recommendation says "either e or r", the nicer e
    "eitheror": Truth(
        "eitheror",
        EITHER_FACTORS,
        _either,
        _cycle(EITHER_FACTORS, {**GROUP_CATEGORIES, "e": "environment", "r": "source_remove"}),
        noise=0.04,
    ),
    # a helpful and a harmful factor of the same size that a group drop cancels
    "cancel": Truth(
        "cancel",
        CANCEL_FACTORS,
        _cancel,
        _cycle(CANCEL_FACTORS, {**GROUP_CATEGORIES, "k": "safe_config"}),
        noise=0.04,
    ),
}
