"""No RunSpec or RunRecord is changed after it is built: both are frozen dataclasses, every
stage hands on a new one (``dataclasses.replace``), and no module of perflab assigns to a
spec's or record's fields or tables (an AST scan, so an ``Any``-typed one is caught too)."""

from __future__ import annotations

import ast
import dataclasses
import re
from pathlib import Path
from typing import Any

import pytest

import perflab
from perflab.factors.kinds import FACTOR_KINDS
from perflab.run.record import RunRecord
from perflab.spec import RunSpec

SRC = Path(perflab.__file__).parent
SPEC_FIELDS = {f.name for f in dataclasses.fields(RunSpec)}
RECORD_FIELDS = {f.name for f in dataclasses.fields(RunRecord)}
#: The names perflab gives a spec or a record (``spec``, ``base``, ``rec``, ``record`` ...).
HOLDER = re.compile(r"(spec|rec|record|base|run)s?\d?$|^(spec|rec|record)_")
MUTATORS = {"append", "extend", "update", "setdefault", "pop", "insert", "clear", "remove"}


def _record() -> RunRecord:
    return RunRecord("r1", "t0", "t1", "parsl-htex", "noop", "ok", measurement={"a": 1})


@pytest.mark.parametrize("field", sorted(SPEC_FIELDS))
def test_every_field_of_a_spec_is_read_only(field: str) -> None:
    spec = RunSpec(tasks=10)
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(spec, field, getattr(spec, field))


@pytest.mark.parametrize("field", sorted(RECORD_FIELDS))
def test_every_field_of_a_record_is_read_only(field: str) -> None:
    record = _record()
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(record, field, getattr(record, field))


def test_replace_makes_a_new_spec_and_keeps_the_defaults_rule() -> None:
    spec = RunSpec(command="echo 1")
    other = dataclasses.replace(spec, metric="us_per_task")
    # a metric perflab cannot measure of a command is read from its print, even so
    assert not spec.score_line and other.score_line
    # a command's default metric is perflab's own measurement of it, an engine's µs/task
    assert spec.metric == "wall_s" and other.metric == "us_per_task"
    assert RunSpec().metric == "us_per_task"
    # the defaults a spec settles while it is built still hold for the new one
    assert (other.target, other.workload, other.cwd) == ("command", None, spec.cwd)
    assert dataclasses.replace(RunSpec(tasks=5), tasks=None).time_s == 5.0


#: One value per kind whose ``apply`` needs nothing of the machine.
KIND_VALUES: dict[str, tuple[str, Any]] = {
    "config": ("config", {"workers": 2}),
    "env": ("env", {"PERFLAB_X": 1}),
    "workload": ("workload", {"task_ms": 1}),
    "wrapper": ("wrapper", {"nice": 5, "affinity": "roles"}),
    "patch": ("patch", {"package": "parsl", "diff": "/x.diff", "factor": "f"}),
    "transform": ("transform", [{"factor": "f", "package": "parsl", "op": "remove_call"}]),
    "package": ("package", {"parsl": "2024.6.3"}),
    "system": ("system", "htex_local"),
    "label": ("label", True),
}


@pytest.mark.parametrize("kind", sorted(KIND_VALUES))
def test_a_factor_kind_hands_on_a_new_spec_and_leaves_the_given_one_alone(kind: str) -> None:
    key, value = KIND_VALUES[kind]
    spec = RunSpec(
        tasks=10,
        params={"task_ms": 0},
        engine_options={"workers": 1},
        env={"A": "1"},
        packages=["parsl==1"],
        wrapper=["taskset", "-c", "0"],
        patches=[{"package": "p", "diff": "d", "factor": "g"}],
        transforms=[{"factor": "g"}],
    )
    before = spec.to_dict()
    out = FACTOR_KINDS.get(kind).apply(spec, key, value)
    assert isinstance(out, RunSpec)
    assert spec.to_dict() == before  # nor any of its tables
    if kind != "label":
        assert out.to_dict() != before


def _name(node: ast.expr) -> str | None:
    """The variable a field belongs to: ``spec`` of ``spec.env``, ``side.spec`` -> ``spec``."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


def _field_of_holder(node: ast.expr) -> str | None:
    """``spec.tasks`` (or ``rec.measurement``): the field, when the object is a spec's or a
    record's by its name and the attribute is one of their fields."""
    if not isinstance(node, ast.Attribute):
        return None
    holder = _name(node.value)
    if holder is None or holder == "self" or not HOLDER.search(holder):
        return None
    return node.attr if node.attr in SPEC_FIELDS | RECORD_FIELDS else None


def _targets(node: ast.AST) -> list[ast.expr]:
    if isinstance(node, ast.Assign):
        found = list(node.targets)
    elif isinstance(node, ast.AugAssign | ast.AnnAssign):
        found = [node.target]
    else:
        return []
    flat: list[ast.expr] = []
    while found:
        t = found.pop()
        if isinstance(t, ast.Tuple | ast.List):
            found.extend(t.elts)
        else:
            flat.append(t)
    return flat


def mutations(tree: ast.AST) -> list[tuple[int, str]]:
    """Where a module changes a spec or a record: a field assigned, a field's table assigned
    into or changed in place, ``setattr`` on one."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        for t in _targets(node):
            if _field_of_holder(t) or isinstance(t, ast.Subscript) and _field_of_holder(t.value):
                found.append((t.lineno, ast.unparse(t)))
        if not isinstance(node, ast.Call):
            continue
        f = node.func
        if isinstance(f, ast.Attribute) and f.attr in MUTATORS and _field_of_holder(f.value):
            found.append((node.lineno, ast.unparse(f)))
        if isinstance(f, ast.Name) and f.id == "setattr" and node.args:
            holder = _name(node.args[0])
            if holder and HOLDER.search(holder):
                found.append((node.lineno, ast.unparse(node)))
    return sorted(found)


def test_the_scan_finds_each_way_of_changing_a_spec_or_a_record() -> None:
    planted = """
spec.tasks = 3
rec.status, rec.error = "failed", "x"
record.measurement["k"] = 1
side.spec.env.update({})
base.treatments.append("a")
setattr(record, "wall_s", 1.0)
self.status = "fine"
cmp.decision = None
out = dataclasses.replace(spec, tasks=3)
"""
    assert [line for line, _ in mutations(ast.parse(planted))] == [2, 3, 3, 4, 5, 6, 7]


def test_no_module_changes_a_spec_or_a_record_after_it_is_built() -> None:
    found = []
    for path in sorted(SRC.rglob("*.py")):
        for line, what in mutations(ast.parse(path.read_text(), str(path))):
            found.append(f"{path.relative_to(SRC)}:{line}: {what}")
    assert found == []
