"""Parsl helpers shared by the engines and the Parsl runner (engines/parsl_common.py)."""

from __future__ import annotations

from types import SimpleNamespace

from perflab.engines.parsl_common import launch_initial_blocks


def _dfk(period: float) -> tuple[SimpleNamespace, list[int]]:
    polls: list[int] = []
    poller = SimpleNamespace(poll=lambda: polls.append(1))
    return SimpleNamespace(
        job_status_poller=poller, config=SimpleNamespace(strategy_period=period)
    ), polls


def test_initial_blocks_are_launched_at_load_not_at_the_first_tick() -> None:
    dfk, polls = _dfk(5.0)
    launch_initial_blocks(dfk, 0.3)
    assert polls == [1]


def test_a_slow_load_leaves_the_blocks_to_the_poller() -> None:
    """A load that took half a period may meet the poller's own tick: polling then could
    launch the blocks twice, so the poller is left to it."""
    dfk, polls = _dfk(5.0)
    launch_initial_blocks(dfk, 2.6)
    assert polls == []


def test_a_release_whose_poll_takes_arguments_is_left_alone() -> None:
    calls: list[object] = []
    dfk = SimpleNamespace(
        job_status_poller=SimpleNamespace(poll=lambda now: calls.append(now)),
        config=SimpleNamespace(strategy_period=5.0),
    )
    launch_initial_blocks(dfk, 0.1)
    launch_initial_blocks(SimpleNamespace(config=SimpleNamespace(strategy_period=5.0)), 0.1)
    assert calls == []
