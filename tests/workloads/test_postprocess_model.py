"""The SimPy model of the post-processing loop, against what can be worked out by hand."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from perflab.workloads.postprocess_model import (
    MODEL_POLICIES,
    POLICIES,
    Costs,
    ideal_makespan,
    simulate,
)


def test_manager_bound_loop_takes_every_post_process_in_turn() -> None:
    # C * P > T: the manager is never idle after the first result, whatever the policy.
    for policy in POLICIES:
        assert simulate(20, 5, 1.0, 1.0, policy) == pytest.approx(1.0 + 20 * 1.0)


def test_retrieve_one_worker_waits_for_its_own_post_process() -> None:
    # C * P < T: staggered workers each cycle through task + post-process (n/c rounds),
    # drain-many hands out replacements first, so only the last round's post-processing adds.
    n, c, t, p = 40, 4, 1.0, 0.1
    one = simulate(n, c, t, p, "retrieve-one")
    many = simulate(n, c, t, p, "drain-many")
    assert one == pytest.approx((n / c) * (t + p) + (c - 1) * p, rel=0.02)
    assert many == pytest.approx((n / c) * t + c * p, rel=0.02)


def test_work_queue_sends_nothing_while_results_wait_to_be_received() -> None:
    # Receive-before-send: a round's replacements go out only after all c results are
    # post-processed, so each round costs t + c * p.
    n, c, t, p = 20, 5, 1.0, 0.1
    assert simulate(n, c, t, p, "retrieve-one", "workqueue") == pytest.approx(
        (n / c) * (t + c * p), rel=0.02
    )
    many = simulate(n, c, t, p, "wq-retrieve-many", "workqueue")
    assert many < simulate(n, c, t, p, "retrieve-one", "workqueue")


def test_work_queue_round_waits_for_its_quickest_task_not_the_mean() -> None:
    # Per-task times replayed in submission order (0.5, 1.0, 0.5, 1.0), c = 2, p = 0.1: the
    # first result comes at 0.5, the second at 1.0; task 3 went out at 0.6 and ended at 1.1,
    # before task 4 was submitted, so it is received first (receive before send); task 4
    # goes out at 1.2 and ends at 2.2; + p = 2.3.  Every task at the mean 0.75 gives 1.9.
    samples = [0.5, 1.0, 0.5, 1.0]
    assert simulate(4, 2, 0.75, 0.1, "retrieve-one", "workqueue", samples=samples) == (
        pytest.approx(2.3)
    )
    assert simulate(4, 2, 0.75, 0.1, "retrieve-one", "workqueue") == pytest.approx(1.9)


def test_work_queue_drain_misses_a_task_that_ended_while_nobody_polled() -> None:
    # c = 2, p = 0.2, task times 0.19, 0.3, 0.19, 0.3.  Task 3 ends at 0.38 while the
    # application post-processes task 1 and the manager sits idle, so the drain at 0.39 takes
    # only task 2; task 4 goes out after task 3 is received, and the drain at 0.59 waits for
    # that pass (task 4 back at 0.69): 0.69 + 2p = 1.09.  Had the manager known at once, task
    # 4 would go out at 0.39 and the run end at 0.99.
    assert simulate(4, 2, 0.0, 0.2, "drain-many", "workqueue", samples=[0.19, 0.3]) == (
        pytest.approx(1.09)
    )


def test_each_post_process_takes_its_own_measured_time() -> None:
    # Pool, drain-many, c = 2, tasks of 1 s, post-processes 0.8, 0.1, 0.1: both first
    # results come at 1.0, task 3 runs 1.0..2.0 while they are post-processed (until 1.9);
    # its own 0.1 ends the run at 2.1.  At the mean (1/3 each) the last one starts at 2.0: 2.33.
    pp = [0.8, 0.1, 0.1]
    assert simulate(3, 2, 1.0, 0.0, "drain-many", pp_samples=pp) == pytest.approx(2.1)
    assert simulate(3, 2, 1.0, 1 / 3, "drain-many") == pytest.approx(2 + 1 / 3)


@settings(max_examples=40, deadline=None)
@given(
    n=st.integers(1, 40),
    c=st.integers(1, 6),
    t=st.floats(0.0, 2.0),
    p=st.floats(0.0, 1.0),
    lat=st.floats(0.0, 0.05),
)
def test_no_policy_beats_the_ideal_makespan(n: int, c: int, t: float, p: float, lat: float) -> None:
    costs = Costs(latency_s=lat, return_s=lat / 2, send_s=lat / 10, recv_s=lat / 10)
    ideal = ideal_makespan(n, c, t, p)
    for policy in POLICIES:
        assert simulate(n, c, t, p, policy, "pool", costs) >= ideal - 1e-9
    for policy in MODEL_POLICIES:
        assert simulate(n, c, t, p, policy, "workqueue", costs) >= ideal - 1e-9
        # Measured per-task times no shorter than t keep the bound.
        spread = [t + lat * (i % 3) for i in range(5)]
        assert simulate(n, c, t, p, policy, "workqueue", costs, 0.7, spread) >= ideal - 1e-9


def test_unknown_policy_is_refused() -> None:
    with pytest.raises(ValueError, match="policy"):
        simulate(4, 2, 1.0, 1.0, "retrieve-all")
    with pytest.raises(ValueError, match="Work Queue"):
        simulate(4, 2, 1.0, 1.0, "wq-retrieve-many", "pool")
