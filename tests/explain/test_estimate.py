"""Shares with intervals from a focus stage's runs, on data with known truth."""

from __future__ import annotations

import numpy as np

from perflab.explain.estimate import ALL, A, B, focus_estimates, screen_effects


def _rows(seed: int, sd: float = 0.03) -> list[tuple[str, int, float]]:
    """A = 50, B = 100; reverting h gives 70 (share 0.6), d gives 80 (0.4), n 100 (0)."""
    rng = np.random.default_rng(seed)
    truth = {A: 50.0, B: 100.0, "h": 70.0, "d": 80.0, "n": 100.0, ALL: 50.0}
    return [
        (c, r, v * float(np.exp(rng.normal(0, sd)))) for r in range(8) for c, v in truth.items()
    ]


def test_shares_cover_the_truth_and_null_is_not_claimed() -> None:
    est = focus_estimates(_rows(1), ["h", "d", "n"])
    f = est["factors"]
    for name, share in (("h", 0.6), ("d", 0.4), ("n", 0.0)):
        assert f[name]["low"] <= share <= f[name]["high"]
    assert f["h"]["claimed"] and f["d"]["claimed"] and not f["n"]["claimed"]
    assert est["residual"]["verdict"] == "no difference"
    assert 1.9 < est["step"]["ratio"] < 2.1


def test_screen_main_effects_from_a_two_level_design() -> None:
    rng = np.random.default_rng(0)
    rows = []
    for _ in range(3):
        for x in ((0, 0), (0, 1), (1, 0), (1, 1)):
            on = [f for f, v in zip(("h", "n"), x, strict=True) if v]
            rows.append((on, 100.0 * (0.7 if x[0] else 1.0) * float(np.exp(rng.normal(0, 0.02)))))
    eff = screen_effects(rows, ["h", "n"])
    assert eff["h"]["p"] < 0.01 and abs(eff["h"]["ratio"] - 0.7) < 0.05
    assert eff["n"]["p"] > 0.01


def test_a_step_the_focus_does_not_see_again_defines_no_shares() -> None:
    """A = B: a factor that changes B still shows in its ratio, but a share of no step is
    a number over ~0: unless the step's interval excludes 1 (a 5% event here), nothing is
    claimed."""
    confirmed = 0
    for seed in range(40):
        rng = np.random.default_rng(seed)
        truth = {A: 100.0, B: 100.0, "h": 70.0, ALL: 70.0}
        rows = [(c, r, v * float(np.exp(rng.normal(0, 0.03))))
                for r in range(8) for c, v in truth.items()]  # fmt: skip
        est = focus_estimates(rows, ["h"])
        confirmed += est["step"]["confirmed"]
        assert est["factors"]["h"]["claimed"] == est["step"]["confirmed"]
        assert 0.65 < est["factors"]["h"]["ratio"] < 0.75
    assert confirmed <= 6  # binomial(40, 0.05) exceeds 6 with probability 0.005
    assert focus_estimates(_rows(1), ["h", "d", "n"])["step"]["confirmed"]


def test_a_tiny_but_significant_effect_is_not_claimed() -> None:
    """Precise runs make a 0.2%-of-the-step change significant; it is not named (its share
    is under the threshold), while the hunk that carries the step is, over 10 seeds."""
    for seed in range(10):
        rng = np.random.default_rng(seed)
        truth = {A: 100.0, B: 200.0, "h": 100.0, "tiny": 199.8, ALL: 99.8}
        rows = [(c, r, v * float(np.exp(rng.normal(0, 0.0005))))
                for r in range(8) for c, v in truth.items()]  # fmt: skip
        est = focus_estimates(rows, ["h", "tiny"])
        f = est["factors"]
        assert f["tiny"]["p_holm"] < 0.05 and not f["tiny"]["claimed"]
        assert f["h"]["claimed"]
