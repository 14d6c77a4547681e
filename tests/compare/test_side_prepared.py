"""A comparison prepares each side once (its venv, trees and environment) and every run of
the side reuses that ``Prepared``: the gate, ``compare --precision`` and ``history``."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
from click.testing import CliRunner
from sidefakes import CountingPrepare, unbuilt

import perflab.cli  # noqa: F401  (registers the verbs)
from perflab.cli.app import main
from perflab.compare import gate, history
from perflab.compare.gate import Side, run_compare
from perflab.prepare import Prepared, prepare
from perflab.run.record import RunRecord
from perflab.spec import RunSpec


class Machine:
    """Records of fresh runs (side B 20 % slower), and every ``Prepared`` it was handed."""

    def __init__(self) -> None:
        self.seen: list[Prepared] = []

    def __call__(self, ready: RunSpec | Prepared) -> RunRecord:
        assert isinstance(ready, Prepared), "a run was handed a spec: it would prepare again"
        self.seen.append(ready)
        slow = 1.2 if ready.spec.command == "b" else 1.0
        us = slow * (100.0 + len(self.seen) % 3)
        rec = RunRecord("r", "", "", "command", None, "ok", tasks=10, us_per_task=us)
        return replace(rec, tasks_per_s=1e6 / us)


def test_the_gate_prepares_each_side_once_for_all_its_runs(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    counting, machine = CountingPrepare(), Machine()
    monkeypatch.setattr(gate, "prepare", counting)
    monkeypatch.setattr(gate, "measure", machine)
    a, b = (
        Side("A", RunSpec(metric="us_per_task", command="a")),
        Side("B", RunSpec(metric="us_per_task", command="b")),
    )
    cmp = run_compare(a, b, "us_per_task", n_min=6, n_max=6, sequential=False)
    assert len(a.values) == len(b.values) == 6 and cmp.decision is not None
    assert [s.command for s in counting.calls] == ["a", "b"]  # once each, before any run
    assert {id(p) for p in machine.seen} == {id(a.prepared), id(b.prepared)}
    # a side made ready by its caller (the verb) is not prepared again by the gate
    run_compare(a, b, "us_per_task", n_min=2, n_max=2, sequential=False)
    assert len(counting.calls) == 2


def test_a_resized_side_keeps_what_was_prepared() -> None:
    side = Side("A", RunSpec(metric="us_per_task", command="a", tasks=10))
    made = side.ready(unbuilt)
    side.resize(500, None)
    assert side.ready(unbuilt) is not made  # the size changed, the preparation did not
    assert side.ready().spec.tasks == side.spec.tasks == 500
    assert side.ready().python == made.python and side.ready().spec.command == "a"


def test_history_prepares_each_release_once_for_all_its_rounds(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    counting, machine = CountingPrepare(), Machine()
    monkeypatch.setattr(history, "measure", machine)
    versions = ["1.0", "1.1", "1.2"]
    hist = history.run_history(
        "toy", versions, RunSpec(metric="us_per_task", command="x"), 4, prepare=counting
    )
    assert [s.packages[-1] for s in counting.calls] == [f"toy=={v}" for v in versions]
    assert len(machine.seen) == 12 and len({id(p) for p in machine.seen}) == 3
    assert all(len(r.values) == 4 for r in hist.releases)


def test_compare_on_commands_prepares_each_side_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    counting = CountingPrepare(prepare)  # the real one: a command needs no venv
    monkeypatch.setattr(gate, "prepare", counting)
    args = ["compare", "--metric", "us_per_task",
            "--command-a", "echo 100", "--command-b", "echo 80", "--runs", "3",
            "--fixed", "--json"]  # fmt: skip
    res = CliRunner().invoke(main, args, env={"PERFLAB_HOME": str(tmp_path / "home")})
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert out["a"]["n"] == out["b"]["n"] == 3 and out["verdict"] == "faster"
    assert [s.command for s in counting.calls] == ["echo 100", "echo 80"]


def test_bisect_prepares_each_point_once_for_all_its_comparisons(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from perflab.bisect.driver import Settings, State, release_points, run_bisect

    def measure(ready: RunSpec | Prepared) -> RunRecord:
        assert isinstance(ready, Prepared), "a run was handed a spec: it would prepare again"
        seen.append(ready)
        version = int(ready.spec.packages[-1].rsplit(".", 1)[1])
        us = (200.0 if version >= 3 else 100.0) * (1 + 0.001 * (len(seen) % 3))
        return RunRecord("r", "", "", "command", None, "ok", tasks=10, us_per_task=us)

    seen: list[Prepared] = []
    points_made, gate_made = CountingPrepare(), CountingPrepare()
    monkeypatch.setattr(gate, "measure", measure)
    monkeypatch.setattr(gate, "prepare", gate_made)
    versions = [f"1.{i}" for i in range(6)]
    points = release_points(
        RunSpec(metric="us_per_task", command="x"), "toy", versions, points_made
    )
    settings = Settings("us_per_task", n_min=4, n_max=4, fixed=True, max_culprits=1)
    search = run_bisect(points, settings, State(tmp_path / "state.json"))
    assert [c.index for c in search.culprits] == [3]  # the step is found
    made = [s.packages[-1] for s in points_made.calls]
    assert len(made) == len(set(made)) >= 3  # each point visited was prepared exactly once
    assert len(search.steps) > len(made) - 1  # points took part in more than one comparison
    assert gate_made.calls == []  # the gate reused each point's Prepared
    assert {id(p) for p in seen} == {id(p.prepared) for p in points if p.prepared}
