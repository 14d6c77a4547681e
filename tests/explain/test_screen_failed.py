"""Issue 43 in explain's screen: a factor on in every failed screen run is unassessable (the
runs that would show its effect failed). It had p = 1.0 and an effect fitted on the other
runs: a number of nothing. It must carry no effect, no p, and the cause. Likewise factors the
ok runs cannot tell apart (they had p = 0 from a rank-deficient fit)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

from perflab.explain import driver
from perflab.explain.estimate import screen_effects
from perflab.explain.render import lines

FACTORS = ["f", "g", "h"]
ERROR = "score: us_per_task nan is not a finite number"


def _rec(i: int, sets: list[str], fails: set[str] | None) -> Any:
    if fails is not None and fails <= set(sets):
        return SimpleNamespace(status="failed", error=ERROR, us_per_task=None)
    # a noisy metric (a test per effect); "f" saves 20 %
    noise = 1.0 + 0.01 * ((7 * i) % 5 - 2)
    return SimpleNamespace(
        status="ok", error=None, us_per_task=100.0 * (0.8 if "f" in sets else 1.0) * noise
    )


def _screen(monkeypatch: pytest.MonkeyPatch, fails: set[str] | None) -> dict[str, Any]:
    def stage(*args: Any) -> list[tuple[list[str], Any]]:
        sets = args[5]  # driver.stage(store, name, base, catalog, factors, sets, info, ...)
        return [(s, _rec(i, s, fails)) for i, s in enumerate(sets)]

    monkeypatch.setattr(driver, "stage", stage)
    # a full factorial in place of the Plackett-Burman design: with the failed runs left
    # out, the rest still estimate every other factor
    full = [[1 if (i >> j) & 1 else -1 for j in range(len(FACTORS))] for i in range(8)]
    monkeypatch.setattr(driver, "_pb", lambda k: np.array(full))
    setup = SimpleNamespace(
        screen_reps=2, seed=0, name="x", metrics=["us_per_task"], step_looks=None
    )
    prep = SimpleNamespace(factors=list(FACTORS), base_b=object(), catalog="c.toml")
    return driver._screen(None, setup, prep, None)  # type: ignore[arg-type]


def test_a_factor_on_in_every_failed_run_is_unassessable_not_p_1(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    sc = _screen(monkeypatch, fails={"g", "h"})
    assert sc["does_not_run"] == ["g", "h"] and sc["failed"] == 4
    for f in ("g", "h"):
        e = sc["effects"][f]
        assert e["p"] is None and e["effect"] is None and e["ratio"] is None, e
        assert "unassessable" in e["why"] and "not a finite number" in e["why"]
        assert not driver.survives(e, 0.1)
    # the other is fitted on the runs that were measured
    f = sc["effects"]["f"]
    assert f["p"] is not None and f["p"] < 0.05 and f["ratio"] == pytest.approx(0.8, abs=0.02)


def test_the_text_says_what_the_screen_could_not_assess(monkeypatch: pytest.MonkeyPatch) -> None:
    sc = _screen(monkeypatch, fails={"g", "h"})
    result = {"package": "p", "a": "1", "b": "2", "command": "c", "target": "command",
              "workload": None, "step": {}, "verdict": "not explained by any factor",
              "metrics": ["us_per_task"], "screen": sc, "runs": 1, "campaigns": ["x.2-screen"],
              "elapsed_s": 1.0}  # fmt: skip
    text = "\n".join(lines(result))
    assert "not assessed by the screen: g, h (unassessable" in text, text


def test_a_screen_without_failures_assesses_every_factor(monkeypatch: pytest.MonkeyPatch) -> None:
    sc = _screen(monkeypatch, fails=None)
    assert sc["does_not_run"] == [] and sc["failed"] == 0
    assert all(e["p"] is not None for e in sc["effects"].values())


def test_factors_the_ok_runs_cannot_tell_apart_have_no_p() -> None:
    """What was left of a 4-run screen of f, g, h when every run with h failed: {f} and {g},
    so f = 1 - g. The rank-deficient fit gave both p = 0.0 and ratios of 4 and 5."""
    rows = [(["f"], 78.4), (["g"], 100.0), (["f"], 80.0), (["g"], 98.0), (["f"], 79.0)]
    eff = screen_effects(rows, ["f", "g"])
    for f in ("f", "g"):
        assert eff[f]["p"] is None and eff[f]["effect"] is None, eff[f]
        assert "aliased among the ok runs" in eff[f]["why"]
        assert not driver.survives(eff[f], 0.1)
