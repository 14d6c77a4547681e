"""One factor per logger call, generated from the installed Parsl (issue 25)."""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from cliprops import examples, run_in, workdir
from conftest import perflab
from perflab.factors.catalog import load_catalogs
from perflab.factors.sources import locate, tree_package
from perflab.factors.transforms import parse_transform
from perflab.prepare.transformed import apply_to_tree


def test_log_call_factors_each_remove_their_own_calls(tmp_path: Path) -> None:
    out = tmp_path / "dflow.toml"
    r = perflab("factors", "generate", "log-calls", "--module", "parsl.dataflow.dflow",
                "-o", str(out), "--json", cwd=tmp_path)  # fmt: skip
    assert r.returncode == 0, r.stderr
    summary = json.loads(r.stdout)
    assert summary["factors"] >= 20 and summary["calls"] >= summary["factors"]
    cat = load_catalogs([str(out)])
    generated = [n for n in cat.names() if n.startswith("log_dflow_")]
    assert len(generated) == summary["factors"]
    # every call of the grouped factor has its own factor, in conflict with the group
    group = set(cat.get("src_submit_biglogs_remove").conflicts) & set(generated)
    assert len(group) >= 10
    pkg_dir, version = locate("parsl", sys.executable)
    total = 0
    for name in generated:
        [t] = cat.get(name).effects["transform"]
        tr = parse_transform({k: v for k, v in t.items() if k != "factor"}, name)
        _, report = apply_to_tree(pkg_dir, "parsl", version, [(name, tr)])
        total += report[0]["total"]
    assert total == summary["calls"]  # each call removed by exactly its own factor

    # the group's line factors together make exactly the group's change (the per-line
    # screen's "all lines" set is the grouped factor, split)
    def items(names: list[str]) -> list[tuple[str, Any]]:
        return [(n, parse_transform({k: v for k, v in e.items() if k != "factor"}, n))
                for n in names for e in cat.get(n).effects["transform"]]  # fmt: skip

    whole, _ = apply_to_tree(pkg_dir, "parsl", version, items(["src_submit_biglogs_remove"]))
    parts, _ = apply_to_tree(pkg_dir, "parsl", version, items(sorted(group)))
    assert parts == whole
    # names come from module, function and message: a second run gives the same names
    again = tmp_path / "again.toml"
    perflab("factors", "generate", "log-calls", "--module", "parsl.dataflow.dflow",
            "-o", str(again), cwd=tmp_path)  # fmt: skip
    assert again.read_text() == out.read_text()


def test_a_module_glob_that_matches_nothing_is_exit_2(tmp_path: Path) -> None:
    r = perflab("factors", "generate", "log-calls", "--module", "parsl.nothing.*",
                "-o", str(tmp_path / "x.toml"), cwd=tmp_path)  # fmt: skip
    assert r.returncode == 2 and "parsl.nothing.*" in r.stderr
    assert not (tmp_path / "x.toml").exists()


def test_the_glob_of_the_help_writes_a_catalog_whose_factors_each_remove_their_call(
    tmp_path: Path,
) -> None:
    """Issue 43: the glob form ended in IndexError (a call with no usable literal got a match
    that was its whitespace-collapsed text, found in no call, so its factor had no call)."""
    out = tmp_path / "g.toml"
    glob = "parsl.executors.high_throughput.*"
    r = perflab("factors", "generate", "log-calls", "--module", glob, "-o", str(out), "--json",
                cwd=tmp_path)  # fmt: skip
    assert r.returncode == 0, r.stderr
    summary = json.loads(r.stdout)
    cat = load_catalogs([str(out)])
    pkg_dir, version = locate("parsl", sys.executable)
    names = [n for n in cat.names() if cat.get(n).tags == ["logging", "log-call"]]
    assert len(names) == summary["factors"] > 50
    items = []
    for name in names:
        [t] = cat.get(name).effects["transform"]
        items.append((name, parse_transform({k: v for k, v in t.items() if k != "factor"}, name)))
    _, report = apply_to_tree(pkg_dir, "parsl", version, items)
    assert sum(r["total"] for r in report) == summary["calls"]


def _tree(tmp_path: Path, files: dict[str, str | bytes]) -> Path:
    pkg = tmp_path / "tree" / "pkg"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    for name, text in files.items():
        target = pkg / name
        if isinstance(text, bytes):
            target.write_bytes(text)
        else:
            target.write_text(text)
    return tmp_path / "tree"


def test_a_call_without_literal_a_hostile_file_name_and_an_unparsable_file(
    tmp_path: Path,
) -> None:
    """A call whose only text is code, spread over lines; a module named ``a b`` and a
    function ``café`` (names must stay catalog names); a template that is not Python and a
    file in another encoding (skipped, said); a tab and a form feed in a match."""
    tree = _tree(tmp_path, {
        "a b.py": "import logging\nlogger = logging.getLogger()\n\ndef café(x):\n"
                  "    logger.debug(\n        x,\n        x)\n"
                  "    logger.info('tab\\there\\x0c %s', x)\n"
                  "    logger.info(\"a\tliteral\ttab\")\n",
        "broken.py": "def (:\n",
        "latin.py": b"# \xe9\nimport logging\nlogging.getLogger().debug('x')\n",
    })  # fmt: skip
    out = tmp_path / "g.toml"
    r = perflab("factors", "generate", "log-calls", "--package", "pkg", "--source", str(tree),
                "--module", "pkg.*", "-o", str(out), "--json", cwd=tmp_path)  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert "broken.py: skipped" in r.stderr and "latin.py: skipped" in r.stderr
    assert "Traceback" not in r.stderr
    cat = load_catalogs([str(out)])
    names = [n for n in cat.names() if n.startswith("log_a_b_caf_")]
    assert len(names) == 3, cat.names()
    text = (tree / "pkg" / "a b.py").read_text()
    for n in names:
        [t] = cat.get(n).effects["transform"]
        assert all(m in text for m in t["match"]), t["match"]


# --- drawn sources (hypothesis, issue 43) ---------------------------------------------------

WORDS = ["starting", "done", "it's", 'a "quoted" word', "tab\there", "back\\slash", "x",
         "Task %s", "é", "submitting task", "submitting task now"]  # fmt: skip
CALLS = [
    "logger.{lv}({msg!r})",
    "logger.{lv}({msg!r}, x)",
    "logger.{lv}({msg!r} + str(x))",
    "logger.{lv}(\n        {msg!r}\n        ' more',\n        x)",
    "logger.{lv}(x)",
    "logger.{lv}(\n        x,\n        x)",
    "logger.{lv}('%s', x)",
    "logger.{lv}(f'{{x}}')",
]


@st.composite
def source(draw: st.DrawFn) -> str:
    lines = ["import logging", "logger = logging.getLogger(__name__)", ""]
    for i in range(draw(st.integers(1, 3))):
        lines.append(f"def {draw(st.sampled_from(['f', 'g', 'café', 'run']))}{i}(x):")
        for _ in range(draw(st.integers(1, 4))):
            call = draw(st.sampled_from(CALLS))
            lv = draw(st.sampled_from(["debug", "info", "warning"]))
            lines.append("    " + call.format(lv=lv, msg=draw(st.sampled_from(WORDS))))
    return "\n".join(lines) + "\n"


@examples(40)
@given(files=st.lists(source(), min_size=1, max_size=2),
       glob=st.sampled_from(["pkg.*", "pkg.m0", "pkg.m*", "pkg.nothing", "pkg", "[", ""]),
       levels=st.sampled_from(["debug,info", "debug", "warning", "", "nope"]))  # fmt: skip
def test_any_source_gives_factors_that_each_remove_their_own_calls(
    files: list[str], glob: str, levels: str
) -> None:
    """Exit 0 with a catalog whose factors each remove their own calls and together all
    calls exactly once, or one line and exit 2."""
    wd = workdir()
    tree = Path(tempfile.mkdtemp(dir=wd.path))
    (tree / "pkg").mkdir()
    (tree / "pkg" / "__init__.py").write_text("")
    for i, text in enumerate(files):
        (tree / "pkg" / f"m{i}.py").write_text(text)
    out = tree / "out.toml"
    args = ["factors", "generate", "log-calls", "--package", "pkg", "--source", str(tree),
            "--module", glob, "--levels", levels, "-o", str(out), "--json"]  # fmt: skip
    res = run_in(wd, args, store=False)
    if res.code != 0:
        return
    summary = json.loads(res.stdout)
    cat = load_catalogs([str(out)])
    names = [n for n in cat.names() if cat.get(n).tags == ["logging", "log-call"]]
    assert len(names) == summary["factors"]
    pkg_dir, version = tree_package(tree, "pkg")
    total = 0
    for name in names:
        [t] = cat.get(name).effects["transform"]
        tr = parse_transform({k: v for k, v in t.items() if k != "factor"}, name)
        _, report = apply_to_tree(pkg_dir, "pkg", version, [(name, tr)])
        assert report[0]["total"] >= 1, name
        total += report[0]["total"]
    assert total == summary["calls"]
