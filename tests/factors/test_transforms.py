"""Source transforms: what they change, on any version, and what they refuse (issue 25)."""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import perflab
from perflab.errors import PerflabError
from perflab.factors.sources import locate, tree_package
from perflab.factors.transforms import Transform, apply, log_sites, parse_transform
from perflab.prepare.transformed import apply_to_tree

SOURCE = """
import logging
logger = logging.getLogger(__name__)
POLL_MS = 10


class Pool:
    def __init__(self, poll_period: int = 10, *, name="p"):
        self.log = logger

    def run(self, task):
        logger.debug(f"Received task {task!r} of {self} at 10%")
        logger.info("Done {}".format(task))
        logger.debug("already lazy %s", task)
        self.log.debug(f"width {task:>8}")
        if task:
            logger.warning("kept: not a selected level")
        return task
"""


def t(**kw: object) -> Transform:
    return parse_transform({"package": "pkg", "module": "pkg.pool", **kw}, "test")


def test_remove_log_calls_by_level_and_match() -> None:
    out, n = apply(t(op="remove_log_calls"), SOURCE, "pkg.pool")
    assert n == 4 and "warning" in out and "logger.debug" not in out
    compile(out, "pool.py", "exec")
    out, n = apply(t(op="remove_log_calls", match=["Done"]), SOURCE, "pkg.pool")
    assert n == 1 and "Done" not in out and "Received task" in out
    out, n = apply(t(op="remove_log_calls", function="Pool.__init__"), SOURCE, "pkg.pool")
    assert n == 0


def test_lazy_log_calls_rewrite_only_what_they_can_exactly() -> None:
    out, n = apply(t(op="lazy_log_calls"), SOURCE, "pkg.pool")
    assert n == 2  # the f-string and the .format(); not the lazy one, not the format spec
    assert "logger.debug('Received task %r of %s at 10%%', task, self)" in out
    assert "logger.info('Done %s', task)" in out
    assert 'self.log.debug(f"width {task:>8}")' in out


def test_set_default_and_constant() -> None:
    out, n = apply(
        t(op="set_default", function="Pool.__init__", name="poll_period", value=100),
        SOURCE, "pkg.pool",
    )  # fmt: skip
    assert n == 1 and "poll_period: int = 100" in out
    out, n = apply(t(op="set_default", function="Pool.*", name="name", value="q"), SOURCE, "x")
    assert n == 1 and "name='q'" in out
    out, n = apply(t(op="set_constant", name="POLL_MS", value=50), SOURCE, "pkg.pool")
    assert n == 1 and "POLL_MS = 50" in out
    # inside a function: a local or an attribute, to a literal or an expression
    out, n = apply(
        t(op="set_constant", function="Pool.__init__", name="self.log", expr="{}"),
        SOURCE, "pkg.pool",
    )  # fmt: skip
    assert n == 1 and "self.log = {}" in out
    with pytest.raises(PerflabError, match="one of `value`, `expr`"):
        t(op="set_constant", name="X", value=1, expr="2")


def test_sites_name_their_function() -> None:
    sites = log_sites(SOURCE, "pkg.pool")
    assert [(s.function, s.level) for s in sites][:2] == [
        ("Pool.run", "debug"),
        ("Pool.run", "info"),
    ]
    assert sites[0].message() == "Received task of at 10%"


def test_bad_transforms_are_refused_with_the_selector_and_version(tmp_path: Path) -> None:
    with pytest.raises(PerflabError, match="op 'nope' is not one of"):
        parse_transform({"package": "p", "module": "m", "op": "nope"}, "f")
    with pytest.raises(PerflabError, match="set_default needs `function`"):
        parse_transform({"package": "p", "module": "m", "op": "set_default", "name": "a",
                         "value": 1}, "f")  # fmt: skip
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "pool.py").write_text(SOURCE)
    with pytest.raises(
        PerflabError, match=r"f1: 'remove logger calls matching \['nothing'\].*pkg 9\.9"
    ):
        apply_to_tree(pkg, "pkg", "9.9", [("f1", t(op="remove_log_calls", match=["nothing"]))])
    with pytest.raises(PerflabError, match="no module matches pkg.other"):
        apply_to_tree(pkg, "pkg", "9.9", [("f1", Transform("pkg", "lazy_log_calls", "pkg.other"))])
    with pytest.raises(PerflabError, match="no package 'parsl' in it"):
        tree_package(tmp_path, "parsl")


def test_a_source_tree_that_is_not_the_package_is_exit_2(tmp_path: Path) -> None:
    r = perflab("run", "--target", "parsl-htex", "--tasks", "5", "--source", str(tmp_path),
                cwd=tmp_path)  # fmt: skip
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "no package 'parsl'" in r.stderr
    assert not (tmp_path / ".perflab").exists()


@pytest.mark.slow
def test_a_git_checkout_of_the_release_sdist_transforms_like_the_installed_release(
    tmp_path: Path,
) -> None:
    """The built-in factors on a developer's tree: same changed files as on site-packages."""
    from perflab.factors.catalog import load_catalogs

    pkg_dir, version = locate("parsl", sys.executable)
    got = subprocess.run(
        [sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:",
         "-d", str(tmp_path), f"parsl=={version}"],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert got.returncode == 0, got.stderr[-800:]
    [sdist] = tmp_path.glob("parsl-*.tar.gz")
    shutil.unpack_archive(sdist, tmp_path / "x")
    [tree] = (tmp_path / "x").iterdir()
    subprocess.run(["git", "init", "-q", str(tree)], check=True)
    tree_pkg, tree_version = tree_package(tree, "parsl")
    assert tree_version.startswith("tree-")
    cat = load_catalogs()
    items = [
        (name, parse_transform({k: v for k, v in e.items() if k != "factor"}, name))
        for name in ("src_submit_biglogs_remove", "src_pool_logs_remove")
        for e in cat.get(name).effects["transform"]
    ]
    on_site, rep_site = apply_to_tree(pkg_dir, "parsl", version, items)
    on_tree, rep_tree = apply_to_tree(tree_pkg, "parsl", tree_version, items)
    assert on_site == on_tree and rep_site == rep_tree
    assert sum(r["total"] for r in rep_site) >= 15


def test_a_grouped_factor_names_the_selectors_a_release_lacks(tmp_path: Path) -> None:
    """A release older than some of a grouped factor's calls: the factor applies, and the
    report says which of its selectors found nothing there."""
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "pool.py").write_text(SOURCE)
    grouped = t(op="remove_log_calls", match=["Done", "changing state from"])
    _, report = apply_to_tree(pkg, "pkg", "1.0", [("f", grouped)])
    assert report[0]["total"] == 1 and report[0]["unmatched"] == ["changing state from"]
    _, report = apply_to_tree(pkg, "pkg", "1.0", [("f", t(op="remove_log_calls", match=["Done"]))])
    assert "unmatched" not in report[0]


def test_exclude_takes_one_call_whose_literals_another_call_also_holds() -> None:
    source = (
        "import logging\nlogger = logging.getLogger()\n\n\ndef launch(t, x):\n"
        "    if x:\n        logger.info(f'task {t} launched on executor with id {x}')\n"
        "    else:\n        logger.info(f'task {t} launched on executor')\n"
    )
    both, n = apply(t(op="remove_log_calls", match=["launched on executor"]), source, "pkg.pool")
    assert n == 2
    plain = t(op="remove_log_calls", match=["launched on executor"], exclude=["with id"])
    out, n = apply(plain, source, "pkg.pool")
    assert n == 1 and "with id" in out


LOOPS = """
class Server:
    def start(self, n):
        seen = []
        while len(seen) < n:
            seen.append(len(seen))

        def helper():
            while False:
                pass

        helper()
        return seen
"""


def test_a_statement_added_to_a_loop_runs_on_each_iteration_of_that_function_only() -> None:
    t = parse_transform(
        {"package": "p", "op": "add_to_loop", "module": "p.m", "function": "Server.st*",
         "value": "calls.append(1)"},
        "test",
    )  # fmt: skip
    out, n = apply(t, LOOPS, "p.m")
    assert n == 1  # the nested helper's loop is not the function's own
    calls: list[int] = []
    space: dict = {"calls": calls}
    exec(out, space)
    assert space["Server"]().start(4) == [0, 1, 2, 3] and len(calls) == 4
    assert apply(t, out, "p.m") == (out, 0)  # there already
    missing = parse_transform(
        {"package": "p", "op": "add_to_loop", "module": "p.m", "function": "Other.start",
         "value": "x = 1"},
        "test",
    )  # fmt: skip
    assert apply(missing, LOOPS, "p.m") == (LOOPS, 0)
    with pytest.raises(PerflabError, match="add_to_loop needs `function`"):
        parse_transform({"package": "p", "op": "add_to_loop", "module": "p.m", "value": "x"}, "t")


def test_two_factors_that_add_the_same_import_apply_together(tmp_path: Path) -> None:
    """perflab explain's reverted functions may each bring back one import: in one run the
    second finds it there, which is not a transform that matched nothing."""
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "m.py").write_text("import os\n\nX = os.sep\n")
    add = Transform("pkg", "add_statement", "pkg.m", value="import json")
    texts, report = apply_to_tree(pkg, "pkg", "1.0", [("f1", add), ("f2", add)])
    assert texts[Path("pkg/m.py")].count("import json") == 1
    assert [r["total"] for r in report] == [1, 0]
    with pytest.raises(PerflabError, match="no module matches pkg.other"):
        apply_to_tree(pkg, "pkg", "1.0", [("f1", Transform("pkg", "add_statement", "pkg.other",
                                                             value="import json"))])  # fmt: skip


def test_a_copy_made_by_other_transform_code_is_not_reused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from perflab.prepare import transformed

    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "m.py").write_text("import os\n\nX = os.sep\n")
    items = [("f1", Transform("pkg", "add_statement", "pkg.m", value="import json"))]
    first, _ = transformed.transformed_tree("pkg", pkg, "1.0", items, tmp_path / "cache")
    again, _ = transformed.transformed_tree("pkg", pkg, "1.0", items, tmp_path / "cache")
    monkeypatch.setattr(transformed, "_applier", lambda: "another perflab's")
    other, _ = transformed.transformed_tree("pkg", pkg, "1.0", items, tmp_path / "cache")
    assert first == again != other


@pytest.mark.parametrize(
    "source",
    ["x = 1\r\ny = 'é'\r\nif x:\r\n    z = (2,\r\n         3)\r\n", "a = 1\rb = 2\r",
     "s = '\x0c'\nt = 3\n", "x = ('\u2028')\ny = [1,\n  2]\n"],
)  # fmt: skip
def test_a_logger_call_is_read_as_ast_reads_it(source: str) -> None:
    """log_sites cuts statements from a source split once; every line end and non-ASCII
    text must give what ``ast.get_source_segment`` gives."""
    from perflab.factors.transforms import _segmenter

    segment = _segmenter(source)
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.stmt):
            assert segment(node) == ast.get_source_segment(source, node)
