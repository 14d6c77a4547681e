"""The plain gate (no ``--precision``) with ``--max-time``: an undecided comparison goes on
past its ``--runs`` cap, at looks about 1.5× apart whose levels add up to alpha, until it is
decided or out of time, and then says this node is too noisy for ±``--min-effect`` (with the
CV it measured and the load). Without ``--max-time`` it stops at the cap, as before."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from sidefakes import unbuilt

import perflab.cli  # noqa: F401  (registers the verbs)
from perflab.cli.app import main
from perflab.compare import busy
from perflab.compare.stats import Decision, sequential

ALPHA = 0.05


def runs(rng: np.random.Generator, sigma: float, ratio: float = 1.0) -> Callable[[], float]:
    return lambda: ratio * 100.0 * float(np.exp(rng.normal(0.0, sigma)))


def extended(
    seed: int, sigma: float, budget_pairs: int, ratio: float = 1.0, threshold: float = 0.05
) -> tuple[Decision, list[float], list[Decision]]:
    """The gate with ``--runs 4`` and a budget of ``budget_pairs`` pairs (the clock stands in
    as the pairs run so far)."""
    rng = np.random.default_rng(seed)
    seen: list[Decision] = []
    ran: list[float] = []

    def run_a() -> float:
        ran.append(1.0)
        return runs(rng, sigma)()

    levels = busy.long_looks(4, 4, busy.MOST_PAIRS, ALPHA)
    dec, a, _ = sequential(
        run_a, runs(rng, sigma, ratio), 4, 4, threshold, ALPHA, on_look=seen.append,
        levels=levels, out_of_time=lambda: len(ran) + 1 > budget_pairs,
    )  # fmt: skip
    return dec, a, seen


def test_an_undecided_comparison_goes_on_past_its_cap_until_the_budget() -> None:
    dec, a, seen = extended(1, 0.3, 40)
    assert not dec.decided and len(a) == 40  # past --runs 4, stopped by the budget
    assert seen[0].n_a == 4 and len(seen) < 10  # looks ~1.5× apart, not every block
    # the last (late) look is tested at the level of the next look it had not spent
    levels = busy.long_looks(4, 4, busy.MOST_PAIRS, ALPHA)
    assert seen[-1].alpha == levels[min(k for k in levels if k >= 40)]
    assert sum({d.n_a: d.alpha for d in seen}.values()) <= ALPHA + 1e-12


def test_a_clear_change_stops_on_its_verdict_long_before_the_budget() -> None:
    dec, a, _ = extended(2, 0.03, 400, ratio=1.3)
    assert dec.verdict == "slower" and len(a) < 40


def test_without_a_budget_the_gate_stops_at_its_cap() -> None:
    rng = np.random.default_rng(3)
    dec, a, _ = sequential(runs(rng, 0.3), runs(rng, 0.3), 4, 6, 0.05, ALPHA)
    assert not dec.decided and len(a) == 6


def test_going_on_keeps_the_false_alarm_rate_at_most_alpha() -> None:
    """A/A with a threshold too small to shield it: only the looks' levels keep a verdict of
    faster/slower rare, however long the comparison goes on."""
    seeds = 400
    alarms = sum(extended(s, 0.05, 60, threshold=1e-4)[0].different for s in range(seeds))
    assert alarms / seeds <= ALPHA + 0.025


def test_compare_with_max_time_says_the_node_is_too_noisy(tmp_path: Path) -> None:
    noisy = "python3 -c 'import random; print(1000 * random.lognormvariate(0, 0.3))'"
    args = ["compare", "--command", noisy, "--treat-b", "label:same", "--metric",
            "us_per_task", "--runs", "4", "--max-time", "6", "--alpha", "0.001",
            "--json"]  # fmt: skip
    res = CliRunner().invoke(main, args, env={"PERFLAB_HOME": str(tmp_path)})
    assert res.exit_code == 0, res.output
    got = json.loads(res.stdout)
    assert got["b"]["n"] > 4 and got["verdict"] == "inconclusive"
    assert "too noisy for ±5.0% within --max-time 6 s: measured CV" in got["too_noisy"]
    assert "load" in got["too_noisy"] and got["too_noisy"] in got["notes"]


@pytest.mark.parametrize("extra", [["--fixed"], ["--max-time", "0"]])
def test_max_time_with_fixed_or_no_time_is_one_line_of_bad_input(
    tmp_path: Path, extra: list[str]
) -> None:
    args = ["compare", "--command", "echo 1", "--runs", "4", "--max-time", "5", *extra]
    res = CliRunner().invoke(main, args, env={"PERFLAB_HOME": str(tmp_path)})
    lines = res.stderr.strip().splitlines()
    assert res.exit_code == 2 and len(lines) == 1 and "--max-time" in lines[0], res.output
    assert not any(tmp_path.iterdir())


def test_the_api_takes_the_budget_too(monkeypatch: pytest.MonkeyPatch) -> None:
    """``perflab.api.compare(max_time_s=…)``, the Python form of the verb: runs that say
    30 % noise (a stand-in for the command, 10 ms each) go on past ``runs`` until the
    budget, and the result says the node is too noisy."""
    import time
    from dataclasses import replace

    import perflab.api
    import perflab.compare.gate as gate
    from perflab.run.record import RunRecord
    from perflab.spec import RunSpec

    rng = np.random.default_rng(4)

    def measure(_ready: object) -> RunRecord:
        time.sleep(0.01)
        rec = RunRecord("r", "", "", "command", None, "ok")
        return replace(rec, us_per_task=100.0 * float(np.exp(rng.normal(0.0, 0.3))))

    monkeypatch.setattr(gate, "measure", measure)
    monkeypatch.setattr(gate, "prepare", unbuilt)
    spec = RunSpec(command="echo 1")
    got = perflab.api.compare(spec, spec, "us_per_task", runs=4, max_time_s=2.0)
    assert len(got.b.values) > 4 and got.too_noisy is not None
    assert "within --max-time 2 s" in got.too_noisy
