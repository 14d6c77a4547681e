"""Function-level units of a release diff, their grouping, and their reverts as transforms."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

from perflab.explain.hunks import group_units, module_units
from perflab.explain.plan import to_toml
from perflab.factors.code_ops import replace_function
from perflab.factors.transforms import apply, parse_transform

sys.path.insert(0, str(Path(__file__).parent))
from toyrelease import COMMON, RELEASES  # noqa: E402


def _src(version: str) -> str:
    return "import time\n\n" + COMMON.format(**RELEASES[version])


def test_units_and_groups_of_the_toy_releases() -> None:
    units = module_units("toy.core", _src("1.0"), _src("2.0"), {"Worker.__init__"})
    keys = sorted(u.qualname for u in units)
    # __init__ differs only in its defaults: those are factors of their own
    assert keys == ["Worker.describe", "Worker.run", "Worker.tidy", "fmt"]
    groups = {g.name: g for g in group_units(units)}
    assert set(groups) == {"hunk_core_Worker_run", "hunk_core_Worker_tidy", "hunk_core_fmt_g2"}
    assert "describe calls fmt" in groups["hunk_core_fmt_g2"].why


def test_reverting_every_unit_gives_a_back() -> None:
    a, b = _src("1.0"), _src("2.0")
    units = module_units("toy.core", a, b, set())
    text = b
    for g in group_units(units):
        for t in g.transforms("toy"):
            text, n = apply(parse_transform(t, g.name), text, "toy.core")
            assert n == 1
    assert ast.dump(ast.parse(text)) == ast.dump(ast.parse(a))


def test_replace_function_keeps_multiline_strings_and_adds_lost_methods() -> None:
    src = 'class A:\n    def f(self):\n        x = """a\nb\n    c"""\n        return x\n'
    new = 'def f(self):\n    x = """a\nb\n    c"""\n    return 1\n'
    out, n = replace_function(src, "A.f", new)
    assert n == 1 and '"""a\nb\n    c"""' in out and "return 1" in out
    out, n = replace_function(src, "A.g", "def g(self):\n    return 2\n")
    assert n == 1 and ast.parse(out).body[0].body[-1].name == "g"  # type: ignore[attr-defined]
    assert replace_function(src, "Missing.g", "def g(self):\n    pass\n")[1] == 0


def test_a_lost_function_is_back_before_the_main_guard_that_calls_it(tmp_path: Path) -> None:
    import runpy

    # HTEX runs its interchange as a script: a def added after the guard is not there yet
    src = 'import sys\n\n\nif __name__ == "__main__":\n    sys.exit(f())\n'
    out, n = replace_function(src, "f", "def f():\n    return 0\n")
    assert n == 1
    script = tmp_path / "m.py"
    script.write_text(out)
    try:
        runpy.run_path(str(script), run_name="__main__")
    except SystemExit as stop:
        assert stop.code == 0
    else:
        raise AssertionError("the guard did not run")


def test_two_modules_that_each_lost_a_function_of_one_name_are_two_groups() -> None:
    """Parsl #4068: the interchange and the pool each deleted their own start_file_logger
    and its call. Each caller goes back with its own module's function, not the other's."""
    a = "def start_file_logger(f):\n    return open(f)\n\n\ndef {c}():\n    start_file_logger(1)\n"
    b = "import logging\n\n\ndef {c}():\n    logging.getLogger()\n"
    units = module_units("p.ix", a.format(c="main"), b.format(c="main"), set())
    units += module_units("p.pool", a.format(c="worker"), b.format(c="worker"), set())
    groups = group_units(units)
    assert sorted(sorted(u.key for u in g.units) for g in groups) == [
        ["p.ix:main", "p.ix:start_file_logger"],
        ["p.pool:start_file_logger", "p.pool:worker"],
    ]


def test_catalog_text_is_toml_with_multiline_code() -> None:
    import tomllib

    table = {"description": "x", "transform": [{"op": "replace_function", "value": 'a\n"b"'}]}
    assert tomllib.loads(to_toml({"f": table}))["factor"]["f"] == table
