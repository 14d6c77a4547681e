"""Issue 43 in explain's statistics: a deterministic metric gives exact shares (no test, no
width: p was 0 from a zero standard error), and a screen without enough ok runs reports no
effect (it was 0.0 at p 1.0, a number of nothing)."""

from __future__ import annotations

import math

from perflab.explain.driver import survives
from perflab.explain.estimate import focus_estimates, screen_effects


def test_exact_focus_runs_give_exact_shares_and_claims_without_a_test() -> None:
    values = {"A": 100.0, "B": 120.0, "f": 100.0, "g": 120.0, "B+all": 100.0}
    rows = [(c, r, v) for r in range(3) for c, v in values.items()]
    est = focus_estimates(rows, ["f", "g"])
    assert est["exact"] and est["step"]["p"] is None and est["step"]["confirmed"]
    assert est["step"]["low"] == est["step"]["high"] == est["step"]["ratio"]
    f, g = est["factors"]["f"], est["factors"]["g"]
    assert f["share"] == f["low"] == f["high"] and math.isclose(f["share"], 1.0)
    assert f["p_holm"] is None and f["claimed"]
    assert abs(g["share"]) < 1e-9 and not g["claimed"] and g["p"] is None
    assert est["residual"]["verdict"] == "no difference"


def test_exact_screen_effects_have_no_p_and_only_real_ones_survive() -> None:
    rows = [(s, 100.0 * (0.8 if "f" in s else 1.0)) for s in ([], ["f"], ["g"], ["f", "g"]) * 2]
    eff = screen_effects(rows, ["f", "g"])
    assert eff["f"]["p"] is None and eff["f"]["exact"] and survives(eff["f"], 0.1)
    assert eff["g"]["effect"] == 0.0 and not survives(eff["g"], 0.1)
    assert math.isclose(eff["f"]["ratio"], 0.8)
