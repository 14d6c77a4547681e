"""``bisect --precision``: each comparison planned as ``compare --precision`` plans it, from
the variance parts stored for the benchmark the points are made from; a simulated machine
stands in for the runs (nothing starts)."""

from __future__ import annotations

import json
import math
import re
import sys
from dataclasses import asdict, replace
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from toyrepo import make_repo

import perflab.compare.planned as pc
from perflab.bisect.driver import Point, Settings, State, check_precision, run_bisect
from perflab.cli import main
from perflab.compare import parts as mp
from perflab.compare import precision as pp
from perflab.compare.calibrate import signature
from perflab.compare.precision import Parts
from perflab.errors import PerflabError
from perflab.prepare import Prepared
from perflab.run.record import RunRecord
from perflab.spec import RunSpec

PARTS = Parts(fixed_s=2.0, task_s=0.0005, var_between=0.02**2, var_within=1.0**2)
BASE = RunSpec(target="parsl-htex", workload="noop")
STEP_AT, SLOWER = 5, 1.3


class Machine:
    """Runs of the points: us_per_task is 100 (× 1.3 from point STEP_AT on) × log-normal noise
    with the parts' variance at the run's window."""

    def __init__(self, seed: int = 0) -> None:
        self.rng = np.random.default_rng(seed)
        self.windows: set[int | None] = set()

    def __call__(self, spec: RunSpec | Prepared) -> RunRecord:
        spec = spec.spec if isinstance(spec, Prepared) else spec
        self.windows.add(spec.tasks)
        n = spec.tasks or 1000
        slow = SLOWER if int(spec.env["K"]) >= STEP_AT else 1.0
        value = 100 * slow * math.exp(self.rng.normal(0, math.sqrt(PARTS.var_run(n))))
        return RunRecord("r", "", "", spec.target, spec.workload, "ok", tasks=n,
                         wall_s=value * n / 1e6, us_per_task=value)  # fmt: skip


def _stored(home: Path) -> None:
    measured = mp.Measured(PARTS, 12, 8, 250.0, (1.9, 2.1), (4e-4, 6e-4), (0, 1e-3), (0.9, 1.1))
    mp.save(measured, signature(BASE, "us_per_task"), home)


def _points(n: int = 9) -> list[Point]:
    def make(k: int) -> Prepared:
        # each point's spec differs from the base (as a release's venv does): the parts are
        # still found, through the base
        return Prepared(replace(BASE, env={"K": str(k)}, packages=[f"toy=={k}"]), sys.executable)

    return [Point(str(k), f"point {k}", lambda k=k: make(k)) for k in range(n)]  # type: ignore[misc]


def test_each_comparison_is_planned_to_the_target_and_finds_the_step(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PERFLAB_HOME", str(tmp_path))
    _stored(tmp_path)
    machine = Machine(1)
    monkeypatch.setattr(pc, "measure", machine)
    settings = Settings("us_per_task", precision=0.05, max_culprits=1)
    check_precision(BASE, settings, 9)
    said: list[str] = []
    search = run_bisect(_points(), settings, State(tmp_path / "s.json"), said.append, BASE)
    assert [c.index for c in search.culprits] == [STEP_AT]
    # every run at the window planned for its comparison's level (a smaller level past the
    # planned comparisons asks for more pairs, and may pick another window)
    planned = {pp.plan(PARTS, 0.05, pp.planned_level(s.level)).tasks for s in search.steps}
    assert machine.windows == planned
    for s in search.steps:
        assert s.precision is not None and s.precision["target"] == 0.05
        assert s.precision["stopped"] in ("precision reached", "decided", "most runs")
        rate = pp.per_hour(s.precision["half_width"], s.precision["wall_s"])
        assert s.precision["half_width_per_hour"] == rate
        assert pp.per_hour_text(rate) in s.precision["line"]
    assert any(line.startswith("plan: ") for line in said)
    assert not any("[dim]" in line for line in said)
    c = search.culprits[0].step
    assert c.low < SLOWER < c.high


def test_without_stored_parts_or_too_long_a_plan_nothing_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PERFLAB_HOME", str(tmp_path))
    with pytest.raises(PerflabError, match="run `perflab precision`"):
        check_precision(BASE, Settings("us_per_task", precision=0.05), 9)
    _stored(tmp_path)
    with pytest.raises(PerflabError, match="more than --max-time"):
        check_precision(BASE, Settings("us_per_task", precision=0.001, max_time_s=60), 9)


def test_the_cli_refuses_precision_with_runs_or_without_parts(tmp_path: Path) -> None:
    repo = tmp_path / "clone"
    shas = make_repo(repo, n=3, planted={2: 1.5})
    home = tmp_path / "home"
    args = ["bisect", "--package", "toybis", "--range", f"{shas[0]}..{shas[-1]}", "--repo",
            str(repo), "--build", "tree", "--precision", "5%"]  # fmt: skip
    for extra, says in ((["--runs", "6"], "drop --runs"), ([], "run `perflab precision`")):
        res = CliRunner().invoke(main, [*args, *extra], env={"PERFLAB_HOME": str(home)})
        assert res.exit_code == 2 and res.stderr.count("\n") == 1 and says in res.stderr
    assert not (home / "bisect").exists() or not list((home / "bisect").glob("*.json"))


def test_a_search_without_a_target_keeps_its_state_file_name(tmp_path: Path) -> None:
    """The state file is named by the settings: --precision and --max-time name a planned
    search apart, and leave the name of one without a target as it was before they existed."""
    from perflab.bisect.driver import state_path

    def path(**kw: object) -> Path:
        return state_path(tmp_path, BASE, Settings("us_per_task", **kw), ["a", "b"])  # type: ignore[arg-type]

    assert path() == path(max_time_s=60.0)
    assert path() != path(precision=0.03) != path(precision=0.03, max_time_s=60.0)


class TreeMachine(Machine):
    """The Machine, each commit's cost read from the tree it was built from (``--build
    tree`` puts it in the spec's sources): ``COST`` of ``toybis/core.py``."""

    def __call__(self, spec: RunSpec | Prepared) -> RunRecord:
        spec = spec.spec if isinstance(spec, Prepared) else spec
        self.windows.add(spec.tasks)
        # the tree is in the sources (--build tree) or the package requirement (venv)
        tree = re.search(r"/[^\"']*/bisect/trees/[0-9a-f]{40}", json.dumps(asdict(spec)))
        assert tree is not None
        core = (Path(tree.group(0)) / "toybis" / "core.py").read_text()
        cost = float(core.split("COST = ", 1)[1].split()[0])
        n = spec.tasks or 1000
        value = 100 * cost * math.exp(self.rng.normal(0, math.sqrt(PARTS.var_run(n))))
        return RunRecord("r", "", "", spec.target, spec.workload, "ok", tasks=n,
                         wall_s=value * n / 1e6, us_per_task=value)  # fmt: skip


def test_the_cli_bisects_commits_with_precision_planned_from_stored_parts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`perflab bisect --precision 5%` as a user runs it: the parts stored for the benchmark
    plan each comparison (printed), every run is at a planned window, and the culprit is
    found with its interval; nothing starts (the Machine stands in for the runs)."""
    repo = tmp_path / "clone"
    shas = make_repo(repo, n=5, planted={3: 1.5})
    home = tmp_path / "home"
    home.mkdir()
    _stored(home)
    machine = TreeMachine(2)
    monkeypatch.setattr(pc, "measure", machine)
    args = ["bisect", "--package", "toybis", "--range", f"{shas[0]}..{shas[-1]}", "--repo",
            str(repo), "--build", "tree", "-t", "parsl-htex", "-w", "noop",
            "--precision", "5%", "--json"]  # fmt: skip
    res = CliRunner().invoke(main, args, env={"PERFLAB_HOME": str(home)})
    assert res.exit_code == 0, res.output
    assert "plan: " in res.stderr and "expected CI" in res.stderr
    (stage,) = json.loads(res.stdout)["stages"]
    assert stage["outcome"] == "found"
    (c,) = stage["culprits"]
    assert c["key"] == shas[3]
    assert c["step"]["precision"]["target"] == pytest.approx(0.05)
    assert c["step"]["low"] < 1.5 < c["step"]["high"]
    assert None not in machine.windows and min(machine.windows) >= pp.WINDOW_BOUNDS[0]
    # the comparison it prints to reproduce the culprit is planned as the search's were
    assert "--precision 5%" in c["reproduce"][1] and "--time" not in c["reproduce"][1]


def test_explain_with_precision_plans_each_revert_from_the_base_parts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`bisect --explain --precision` with commits built into venvs: a culprit's spec (and a
    revert's) carries its tree as a package requirement, which the parts' signature does not
    hold; each revert is planned from the base's parts, as the search's comparisons are,
    instead of stopping after the search with "no measured variance parts". A stand-in
    prepare builds nothing; the Machine measures (a revert here changes nothing it sees)."""
    import perflab.cli.bisect as cb

    repo = tmp_path / "clone"
    shas = make_repo(repo, n=3, planted={2: 1.5})
    home = tmp_path / "home"
    home.mkdir()
    _stored(home)
    monkeypatch.setattr(pc, "measure", TreeMachine(3))
    monkeypatch.setattr(cb, "prepare", lambda spec: Prepared(spec, sys.executable))
    args = ["bisect", "--package", "toybis", "--range", f"{shas[0]}..{shas[-1]}", "--repo",
            str(repo), "-t", "parsl-htex", "-w", "noop", "--precision", "10%", "--explain",
            "--json"]  # fmt: skip
    res = CliRunner().invoke(main, args, env={"PERFLAB_HOME": str(home)})
    assert res.exit_code == 0, res.output
    (stage,) = json.loads(res.stdout)["stages"]
    (c,) = stage["culprits"]
    measured = [g for g in c["hunk_groups"] if "ratio" in g]
    assert measured, c["hunk_groups"]
    assert all(0.8 < g["ratio"] < 1.25 for g in measured)  # the stand-in reverts nothing
