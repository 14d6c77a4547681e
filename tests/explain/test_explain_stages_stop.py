"""``explain --precision``: the screen and the focus stages stop once every factor is known
(shown to matter at the look's level, Holm over the factors, or its interval within the
target), like the step; the error spent is stated and the focus's claims are at its last
look's level. A stand-in store and runner: nothing starts."""

from __future__ import annotations

import math
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

from perflab.compare import precision as pp
from perflab.compare.history_seq import step_plan
from perflab.explain import driver, stopping
from perflab.explain.plan import Setup
from perflab.spec import RunSpec

PARTS = pp.Parts(fixed_s=20.0, task_s=0.0005, var_between=0.03**2, var_within=1.5**2)
FACTORS = [f"f{i}" for i in range(7)]


class Store:
    """A stage's planned runs and the records run so far, by seq."""

    def __init__(self) -> None:
        self.sets: list[list[str]] = []
        self.recs: dict[int, Any] = {}

    def pending(self, name: str) -> list[tuple[int, list[str]]]:
        return [(i, s) for i, s in enumerate(self.sets) if i not in self.recs]

    def planned(self, name: str) -> list[tuple[int, list[str]]]:
        return list(enumerate(self.sets))

    def records_by_seq(self, name: str) -> list[tuple[int, Any]]:
        return sorted(self.recs.items())


def patched(monkeypatch: pytest.MonkeyPatch, effects: dict[str, float], sd: float, seed: int):
    """The stage's campaign made in the stand-in store, and runs with a known truth: B's
    time, × ``effects[f]`` for each factor f (reverted) in the set, log-normal noise."""
    rng = np.random.default_rng(seed)
    store = Store()

    def made(st: Store, name: str, base: Any, catalog: Any, factors: Any, sets: Any, info: Any):
        st.sets = [sorted(s) for s in sets]

    def run_campaign(st: Store, name: str, max_runs: int | None = None) -> None:
        for seq, s in st.pending(name)[:max_runs]:
            x = math.prod(effects.get(f, 1.0) for f in s)
            x *= 0.8 if "release_a" in s else 1.0
            us = 100.0 * x * math.exp(sd * rng.normal())
            st.recs[seq] = SimpleNamespace(status="ok", us_per_task=us, error=None)

    monkeypatch.setattr(driver, "made", made)
    monkeypatch.setattr(stopping, "run_campaign", run_campaign)
    return store


def setup(target: float = 0.03, screen_alpha: float = 0.1) -> Setup:
    pl = pp.plan(PARTS, target, 0.05)
    looks = step_plan(pl, 2, 0.05, 3600).looks
    return Setup("x", "p", "1", "2", RunSpec(), ["us_per_task"], runs=pl.pairs,
                 screen_alpha=screen_alpha, step_looks=looks,
                 step_budget=(3600.0, 0.0))  # fmt: skip


def prep() -> Any:
    return SimpleNamespace(factors=list(FACTORS), base_b=RunSpec(), catalog=Path("c"), tables={})


def test_the_screen_stops_once_every_factor_is_known(monkeypatch: pytest.MonkeyPatch) -> None:
    store = patched(monkeypatch, {"f0": 0.7}, 0.01, 0)
    out = driver._screen(store, setup(), prep(), None)  # type: ignore[arg-type]
    p = out["precision"]
    assert p["stopped"] == "every factor known" and p["steps"] < p["most"]
    assert len(store.recs) < len(store.sets)  # the replicates not needed stay unrun
    assert p["looks"][-1]["states"]["f0"] == "decided"
    assert all(s == "precision reached" for f, s in p["looks"][-1]["states"].items() if f != "f0")
    assert sum(float(v) for v in p["levels"].values()) == pytest.approx(0.1)
    assert "levels adding up to α = 0.1" in p["line"] and p["line"].startswith("screen: ")
    assert driver.survives(out["effects"]["f0"], 0.1)


def test_a_noisy_screen_runs_to_its_last_replicate(monkeypatch: pytest.MonkeyPatch) -> None:
    store = patched(monkeypatch, {}, 0.3, 0)
    p = driver._screen(store, setup(), prep(), None)["precision"]  # type: ignore[arg-type]
    assert p["stopped"] == "most runs" and p["steps"] == p["most"]
    assert len(store.recs) == len(store.sets)


def test_null_factors_stop_the_screen_as_shown_at_most_alpha(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Over 60 null screens (7 factors, none matters), how often any factor is 'decided' at
    some look: Holm over factors at levels adding up to 0.1 over looks keeps it ≤ 0.1."""
    hits = 0
    for seed in range(60):
        store = patched(monkeypatch, {}, 0.03, seed)
        p = driver._screen(store, setup(), prep(), None)["precision"]  # type: ignore[arg-type]
        hits += any(s == "decided" for look in p["looks"] for s in look["states"].values())
    # 0.1 × 60 = 6 expected at most; 13 is the binomial 99.9 % quantile
    assert hits <= 13


def test_the_focus_stops_once_known_and_claims_at_its_last_look(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    store = patched(monkeypatch, {"f0": 0.8}, 0.01, 0)
    s = setup()
    out = driver._focus(store, s, prep(), ["f0"], None)  # type: ignore[arg-type]
    p = out["precision"]
    assert p["stopped"] == "every factor known" and len(store.recs) < len(store.sets)
    est = out["us_per_task"]
    assert est["factors"]["f0"]["claimed"]
    assert est["confidence"] == pytest.approx(1 - p["level"])
    assert p["level"] == pytest.approx(s.step_looks.levels[p["steps"]])  # type: ignore[union-attr]
    assert "estimates at its last look" in p["line"]
