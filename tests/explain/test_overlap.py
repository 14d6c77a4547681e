"""Issue 43's leftover in explain: claimed parts that overlap are said to overlap. In the
degenerate table's "one set failed" case a module revert (which holds the failing hunk and
the default) was claimed at 100 % beside the default's 40 %, with no word that the two count
the same part of the step."""

from __future__ import annotations

import math
import random
from typing import Any

from perflab.explain.estimate import contained, focus_estimates
from perflab.explain.render import lines

MOD, DFLT = "revert_modules_1", "dflt_Worker_rounds"
#: The explain column's toy releases (docs/degenerate.md): A 100000 µs, B 200000; B with the
#: module reverted 100000 (it holds the hunk and the default), with the default 160000.
ONE_SET_FAILED = {"A": 1e5, "B": 2e5, MOD: 1e5, DFLT: 1.6e5, "B+all": 1e5}
TABLES = {
    MOD: {"transform": [{"op": "replace_module", "module": "toyrel.core", "value": "…"}]},
    DFLT: {"transform": [{"op": "set_default", "module": "toyrel.core", "name": "rounds"}]},
    "hunk_other_f": {"transform": [{"op": "replace_function", "module": "toyrel.other"}]},
}


def _rows(values: dict[str, float], sd: float = 0.0, seed: int = 0) -> list[Any]:
    rng = random.Random(seed)
    return [(c, r, v * (1 + sd * rng.gauss(0, 1))) for r in range(6) for c, v in values.items()]


def _said(est: dict[str, Any]) -> list[str]:
    """The explanation's text around the focus estimates ``est``."""
    factors = list(est["factors"])
    result = {
        "package": "toyrel", "a": "1.0", "b": "2.0", "command": "python toy.py", "step": {},
        "verdict": "explained", "metrics": ["us_per_task"], "focus": {"us_per_task": est},
        "survivors": factors, "factors": factors, "screen": {"runs": 8}, "runs": 60,
        "campaigns": ["ex.3-focus"], "elapsed_s": 60.0,
    }  # fmt: skip
    return lines(result)


def test_claimed_shares_past_100_percent_are_said_to_overlap() -> None:
    est = focus_estimates(_rows(ONE_SET_FAILED), [MOD, DFLT])
    assert est["factors"][MOD]["claimed"] and est["factors"][DFLT]["claimed"]
    s = est["claimed_sum"]
    assert math.isclose(s["share"], 1.4) and s["low"] == s["high"] and s["overlap"]
    text = "\n".join(_said(est))
    assert f"the claimed shares overlap: {MOD}, {DFLT} add up to 140 % (140 %–140 %)" in text


def test_a_module_revert_holding_a_claimed_default_was_not_varied_apart() -> None:
    assert contained(TABLES, [MOD, DFLT, "hunk_other_f"]) == [[MOD, DFLT]]
    assert contained(TABLES, [DFLT, "hunk_other_f"]) == []
    est = focus_estimates(_rows(ONE_SET_FAILED), [MOD, DFLT])
    est["contained"] = contained(TABLES, [MOD, DFLT])
    text = "\n".join(_said(est))
    assert f"{MOD} and {DFLT} overlap: {MOD} reverts whole a module {DFLT} changes" in text


def test_shares_that_add_up_to_the_step_are_not_called_overlapping() -> None:
    # 60 % + 40 % of a noisy step: the sum's interval holds 100 %
    values = {"A": 100.0, "B": 200.0, "f": 140.0, "g": 160.0, "B+all": 100.0}
    est = focus_estimates(_rows(values, sd=0.01, seed=2), ["f", "g"])
    s = est["claimed_sum"]
    assert s["low"] <= 1.0 <= s["high"] and not s["overlap"]
    assert not any("overlap" in ln for ln in _said(est))
    # and one claimed factor has nothing to overlap with
    one = focus_estimates(_rows({**values, "g": 200.0}, sd=0.01, seed=2), ["f", "g"])
    assert "claimed_sum" not in one and not any("overlap" in ln for ln in _said(one))
