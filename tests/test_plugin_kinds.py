"""Every plugin kind the same way: one registry each, plugins of its declared interface, and
optional hooks read as declared attributes, never by ``getattr`` with a default."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

from conftest import ROOT
from perflab.campaign.designs import DESIGNS, Design
from perflab.campaign.runners import RUNNERS, Runner
from perflab.engines import ENGINES, Engine
from perflab.engines.base import BatchEngine, ExecutorEngine
from perflab.factors.kinds import FACTOR_KINDS, FactorKind
from perflab.profile import PROFILE_KINDS, ProfileKind
from perflab.report.figures import FIGURES, Figure
from perflab.tune.searches import SEARCHES, Search
from perflab.workloads import WORKLOADS
from perflab.workloads.base import Workload

SRC = ROOT / "src" / "perflab"
#: kind -> (registry, declared interface, registered as a class or as an instance)
KINDS = {
    "engine": (ENGINES, Engine, "class"),
    "workload": (WORKLOADS, Workload, "class"),
    "design": (DESIGNS, Design, "class"),
    "runner": (RUNNERS, Runner, "class"),
    "search": (SEARCHES, Search, "class"),
    "factor kind": (FACTOR_KINDS, FactorKind, "instance"),
    "profile kind": (PROFILE_KINDS, ProfileKind, "instance"),
    "figure": (FIGURES, Figure, "instance"),
}


def test_every_kind_has_a_registry_of_plugins_of_its_declared_interface() -> None:
    for kind, (registry, base, how) in KINDS.items():
        assert registry.kind == kind and registry.names(), kind
        for name, plugin in registry.items():
            ok = issubclass(plugin, base) if how == "class" else isinstance(plugin, base)
            assert ok and plugin.name == name, f"{kind} {name}"
    # an engine is one of the two kinds, each with its hooks declared on its base
    assert all(issubclass(e, ExecutorEngine | BatchEngine) for _, e in ENGINES.items())
    assert set(SEARCHES.names()) >= {"optuna", "staged"}


def test_the_zoo_runs_every_engine_that_expresses_dependencies() -> None:
    from perflab.zoo.suite import ZooConfig, default_targets

    able = [n for n, e in ENGINES.items() if e.dependencies is not None]
    assert default_targets() == able == ZooConfig().targets
    assert {"parsl-htex", "dask", "cf-threads"} <= set(able) and "shell" not in able


#: The optional hooks each base declares (methods and class attributes with a default).
def _declared() -> set[str]:
    names: set[str] = set()
    for _, base, _ in KINDS.values():
        for cls in inspect.getmro(base) if inspect.isclass(base) else ():
            names |= {n for n in vars(cls) if not n.startswith("_")}
    for cls in (ExecutorEngine, BatchEngine):
        names |= {n for n in vars(cls) if not n.startswith("_")}
    return names - {"name"}


def test_no_declared_hook_is_read_by_getattr_or_hasattr() -> None:
    hooks, found = _declared(), []
    for path in SRC.rglob("*.py"):
        rel = str(path.relative_to(SRC))
        for node in ast.walk(ast.parse(path.read_text())):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id in ("getattr", "hasattr")
                and len(node.args) >= 2
                and isinstance(node.args[1], ast.Constant)
                and node.args[1].value in hooks
            ):
                found.append(f"{rel}:{node.lineno} {node.func.id}(..., {node.args[1].value!r})")
    assert found == []
    assert "abandonable" in hooks and "measures_shutdown" in hooks  # the test sees them
    assert Path(SRC / "run" / "teardown.py").read_text().count("getattr(") == 0
