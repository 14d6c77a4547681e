"""Every caller makes a spec ready through ``perflab.prepare.prepare`` and nothing else."""

from __future__ import annotations

import ast
import functools

from conftest import ROOT

SRC = ROOT / "src" / "perflab"
#: Modules that run, compare or look at a spec's environment (issue 41's four callers, and
#: the gate's ``Side.ready``, which prepares each side of a comparison once).
CALLERS = (
    "run/measure.py",
    "cli/precision.py",
    "cli/history.py",
    "explain/plan.py",
    "compare/gate.py",
)


@functools.cache
def _trees() -> dict[str, ast.Module]:
    return {str(p.relative_to(SRC)): ast.parse(p.read_text()) for p in SRC.rglob("*.py")}


def test_prepare_is_defined_once_and_the_old_entry_points_are_gone() -> None:
    found = [
        f"{path}:{node.name}"
        for path, tree in _trees().items()
        for node in tree.body  # module level: a workload's prepare() method is its own
        if isinstance(node, ast.FunctionDef)
        and node.name in ("prepare", "prepare_environment", "prepare_sources")
    ]
    assert found == ["prepare/stage.py:prepare"]


def test_the_callers_import_prepare_and_no_one_else_builds_a_venv() -> None:
    importers: dict[str, set[str]] = {}
    for path, tree in _trees().items():
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith(
                "perflab.prepare"
            ):
                for alias in node.names:
                    importers.setdefault(f"{node.module}.{alias.name}", set()).add(path)
    callers = importers["perflab.prepare.prepare"]
    assert set(CALLERS) <= callers
    # a venv is made only by prepare(): outside prepare/, no one reaches into it
    outside = {
        name: paths
        for name, paths in importers.items()
        if name.startswith("perflab.prepare.venvs.")
        and any(not p.startswith("prepare/") for p in paths)
    }
    assert outside == {}


def test_prepare_sits_between_the_catalog_and_the_run() -> None:
    from archgraph import import_graph, room_graph, top_modules

    graph = import_graph()
    rooms = {r: names - set(top_modules(graph)) for r, names in room_graph(graph).items()}
    assert rooms["prepare"] == {"factors", "engines"}
    # a catalog, spec in and spec out: it asks only the hook which options reach a program
    assert "prepare" in rooms["run"] and rooms["factors"] <= {"hook"}
