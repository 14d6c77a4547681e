"""Properties of ``analyze`` on random datasets drawn with the degenerate ones of issue 43
(exact data, constant metric, collinear factors, one run per set, huge and tiny scales, a
missing base): every reported number finite (None where unknown), every interval holding
its estimate, no p = 0 on a zero effect, and predictions equal to measurements on exact data.

Bounded so the file runs in well under a minute on 2 cores; ``HYPOTHESIS_PROFILE=nightly``
draws 25x more."""

from __future__ import annotations

import os
import warnings

import numpy as np
from degenerate import dataset, full
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from test_degenerate import check_honest

from perflab.analysis.analyze import analyze

PROFILES = {"default": 40, "nightly": 1000}
EXAMPLES = settings(
    max_examples=PROFILES.get(os.environ.get("HYPOTHESIS_PROFILE", "default"), 40),
    deadline=None,  # one analyze is ~0.1 s, but a loaded 2-core machine varies 10x
    suppress_health_check=[HealthCheck.too_slow],
    database=None,
)


@st.composite
def campaigns(draw: st.DrawFn) -> tuple:
    """(dataset, exact): a random subset of the full design over 1-4 factors (a pair may be
    tied: collinear), 1-3 runs per set, an additive truth at a scale of 1e-9..1e12, exact
    or with 2% noise, or a constant."""
    k = draw(st.integers(1, 4))
    names = [f"f{j}" for j in range(k)]
    sets = full(names)
    if k >= 2 and draw(st.booleans()):  # f0 and f1 always together
        sets = [s for s in sets if ("f0" in s) == ("f1" in s)]
    keep = draw(st.lists(st.booleans(), min_size=len(sets), max_size=len(sets)))
    sets = [s for s, kept in zip(sets, keep, strict=True) if kept]
    if len(sets) < 2:
        sets = [set(), set(names)]
    scale = draw(st.sampled_from([1e-9, 1e-3, 1.0, 100.0, 1e6, 1e12]))
    kind = draw(st.sampled_from(["exact", "noisy", "constant"]))
    effects = draw(st.lists(st.integers(-3, 3), min_size=k, max_size=k))

    # a multiple of 1/8 of the scale: exact in binary, positive (at least 1/8 of the scale)
    def value(s: set[str]) -> float:
        if kind == "constant":
            return 10.0 * scale
        return scale * (10.0 + sum(e / 8 for e, f in zip(effects, names, strict=True) if f in s))

    reps = draw(st.integers(1, 3))
    noise = 0.02 if kind == "noisy" else 0.0
    seed = draw(st.integers(0, 2**16))
    return dataset(sets, names, reps, value, noise, seed, blocks=reps > 1), kind != "noisy"


@EXAMPLES
@given(campaigns())
@example((dataset([{"f0", "f1", "f3"}, {"f0", "f1", "f2", "f3"}], ["f0", "f1", "f2", "f3"], 1,
                  lambda s: 1e-8), True))  # fmt: skip
def test_every_number_is_finite_and_every_interval_holds_its_estimate(case: tuple) -> None:
    ds, exact = case
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = analyze(ds)
    res = a.to_json()
    check_honest(res)
    if not exact:
        return
    # the additive fit is exact wherever it has a residual degree of freedom to show it
    fit = a.fits["linear"]
    if fit.exact:
        assert np.allclose(a.fitted("linear"), ds.y, rtol=1e-9, atol=0)
        for v in res["factors"].values():
            assert v["p"] is None and not v["significant"]
    chosen = a.model
    if chosen.exact:
        pred = a.fitted(a.inference.chosen)
        pred = np.exp(pred) if chosen.log else pred
        assert np.allclose(pred, ds.y, rtol=1e-8, atol=0)
