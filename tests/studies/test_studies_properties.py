"""Properties of the post-processing study's summary fed failed runs (issue 43), drawn by
hypothesis: which runs of a made-up study failed (all, the base, one point, at random, none).
Whatever the draw: a point none of whose runs succeeded is in ``absent`` with its cause and
has no mean, gain or model error; no summary number comes from a failed run (their stored
makespan, 600 s, never appears); ``unanswered`` says so exactly when a point is absent; every
number is finite and every interval holds its estimate.

Examples: ``EXAMPLES`` (default profile; ``HYPOTHESIS_PROFILE=slow`` ten times more)."""

from __future__ import annotations

import json
import math
import random

import pytest
from hypothesis import example, given
from hypothesis import strategies as st
from test_studies_failed import CAUSE, _at_base, _rows

from cliprops import examples, numbers_in
from perflab.studies import postprocess_charts
from perflab.studies.postprocess import CHARTS, report, unanswered

#: Drawn examples per property, besides one of each pattern (a summary bootstraps each gain:
#: ~0.5 s, several on a loaded machine).
EXAMPLES = 3
PATTERNS = ["all", "base", "one", "random", "none"]


@given(pattern=st.sampled_from(PATTERNS), seed=st.integers(0, 99))
@examples(EXAMPLES)
@example(pattern="all", seed=0)
@example(pattern="base", seed=0)
@example(pattern="one", seed=0)
@example(pattern="random", seed=1)
@example(pattern="none", seed=0)
def test_a_failed_run_never_becomes_a_study_figure(
    pattern: str, seed: int, tmp_path_factory: pytest.TempPathFactory
) -> None:
    rnd = random.Random(seed)
    failed = {
        "all": lambda p: True,
        "base": lambda p: _at_base(p) and p.policy == "retrieve-one",
        "one": lambda p: p.concurrency == 10,
        "random": lambda p: rnd.random() < 0.3,
        "none": lambda p: False,
    }[pattern]
    rows = _rows(failed)
    out = tmp_path_factory.mktemp("study")
    (out / "points.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(postprocess_charts, "charts", lambda summary, out: [])
        s = report(out)
    key = lambda r: (r["policy"], *(r[k] for k in CHARTS))  # noqa: E731
    ok = {key(r) for r in rows if r["status"] == "ok"}
    gone = {key(r) for r in rows} - ok
    assert {key(a) for a in s["absent"]} == gone and all(a["cause"] == CAUSE for a in s["absent"])
    assert (unanswered(s) is not None) == bool(gone)
    assert 600.0 not in numbers_in(s)  # a failed run's makespan is no measurement
    assert all(math.isfinite(x) for x in numbers_in(s))
    for p in s["points"]:
        assert p["ci_low"] is None or p["ci_low"] <= p["mean_s"] <= p["ci_high"]
    for g in s["base_gain"]:
        lo, hi = g["gain_ci"]
        assert lo is None or lo <= g["gain"] <= hi
