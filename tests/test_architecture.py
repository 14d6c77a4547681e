"""The layout's promises: the analysis is pure, plugins are one file, contracts are stable."""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

from archgraph import circles as _circles
from archgraph import import_graph as _import_graph
from archgraph import room as _room
from conftest import ROOT, perflab
from contracts import REL, contract_diffs
from perflab.analysis import analyze
from perflab.campaign.dataset import export, import_csv
from perflab.campaign.source import load
from perflab.campaign.store import Store
from perflab.run.record import RunRecord

SRC = ROOT / "src" / "perflab"
GOLDEN = Path(__file__).parent / "golden"


def test_importing_the_analysis_imports_no_engine_store_or_factor() -> None:
    code = (
        "import sys, perflab.analysis; "
        "print('\\n'.join(m for m in sys.modules if m.startswith('perflab')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    loaded = set(out.stdout.split())
    assert "perflab.analysis.analyze" in loaded
    forbidden = [
        m
        for m in loaded
        if m.startswith(("perflab.engines", "perflab.factors", "perflab.campaign", "perflab.cli"))
        or m in ("perflab.run.measure", "perflab.run.supervisor", "perflab.run.child")
    ]
    assert forbidden == []


def _functions(tree: ast.AST) -> list[ast.FunctionDef | ast.AsyncFunctionDef]:
    return [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)]


def test_modules_and_functions_stay_small() -> None:
    too_long_modules, too_long_functions = [], []
    for path in SRC.rglob("*.py"):
        text = path.read_text()
        if text.count("\n") > 400:
            too_long_modules.append(str(path.relative_to(SRC)))
        if path.relative_to(SRC).parts[0] in ("analysis", "cli", "run"):
            for fn in _functions(ast.parse(text)):
                assert fn.end_lineno is not None
                if fn.end_lineno - fn.lineno + 1 > 60:
                    too_long_functions.append(f"{path.relative_to(SRC)}:{fn.name}")
    assert too_long_modules == []
    assert too_long_functions == []


def test_the_import_graph_has_no_circles_between_modules_or_rooms() -> None:
    graph = _import_graph()
    assert _circles(graph) == []
    rooms: dict[str, set[str]] = {}
    for module, targets in graph.items():
        rooms.setdefault(_room(module), set())
        rooms[_room(module)] |= {_room(t) for t in targets} - {_room(module), "top"}
    for room in list(rooms.values()):
        for r in room:
            rooms.setdefault(r, set())
    assert _circles(rooms) == []


def test_workloads_see_engines_only_through_the_task_protocols() -> None:
    graph = _import_graph()
    crossing = {
        f"{m} -> {t}"
        for m, targets in graph.items()
        for t in targets
        if (_room(m), _room(t)) in (("workloads", "engines"), ("engines", "workloads"))
    }
    assert crossing == set()
    assert {_room(t) for t in graph["perflab.tasks"]} <= {"top", "tasks"}


def test_the_circle_finder_finds_a_planted_circle() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert _circles(graph) == [["a", "b", "c", "a"]]
    assert _circles({"a": {"b"}, "b": set()}) == []


def key_paths(obj: object, prefix: str = "") -> set[str]:
    """Every key path of a JSON value (list items merged), e.g. ``factors.*.ci_low``."""
    out: set[str] = set()
    if isinstance(obj, dict):
        for k, v in obj.items():
            # factor names and model coefficients are data, not contract keys
            name = "*" if prefix.endswith(("factors", "coef", "values", "loadings")) else k
            out |= {f"{prefix}.{name}"} | key_paths(v, f"{prefix}.{name}")
    elif isinstance(obj, list):
        for v in obj:
            out |= key_paths(v, prefix + "[]")
    return out


def _golden_analysis() -> dict:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = analyze(load(str(GOLDEN / "dataset.csv")), seed=0, n_boot=200)
    return json.loads(json.dumps(a.to_json(), default=float))


def test_the_golden_comparison_fails_on_a_removed_key_or_a_moved_number() -> None:
    golden = json.loads((GOLDEN / "analysis.json").read_text())
    assert contract_diffs(golden, golden) == []
    removed = json.loads(json.dumps(golden))
    key = next(iter(removed))
    del removed[key]
    assert contract_diffs(removed, golden) == [f"$.{key}: missing"]
    # the first float of the JSON, moved by ten times the tolerance, and by a tenth of it
    for factor, caught in ((10 * REL, True), (REL / 10, False)):
        moved = json.loads(json.dumps(golden))
        path = _first_float(moved)
        assert path is not None
        holder, k = path
        holder[k] = holder[k] * (1 + factor) if holder[k] else factor
        assert bool(contract_diffs(moved, golden)) is caught
    retyped = json.loads(json.dumps(golden))
    holder, k = _first_float(retyped) or ({}, "")
    holder[k] = str(holder[k])
    assert "expected, got str" in contract_diffs(retyped, golden)[0]


def _first_float(obj: object) -> tuple[dict | list, object] | None:
    items = (
        obj.items() if isinstance(obj, dict) else enumerate(obj) if isinstance(obj, list) else []
    )
    for k, v in items:
        if isinstance(v, float) and v != 0.0:
            return obj, k  # type: ignore[return-value]
        found = _first_float(v)
        if found:
            return found
    return None


def test_contracts_are_unchanged_on_a_fixed_dataset(tmp_path: Path) -> None:
    """tests/golden/ was written by the code before: the analysis JSON must keep its keys,
    value types and numbers (to a relative 1e-9: floating-point sums differ between CPUs);
    the exported CSV and a run record's JSON, which do no arithmetic, byte for byte.  The
    analysis JSON was rewritten once by issue 10 (set-level inference); every key of the JSON
    before it (analysis_v0.json) must still be there: keys are added, never removed."""
    a = _golden_analysis()
    assert contract_diffs(a, json.loads((GOLDEN / "analysis.json").read_text())) == []
    before = key_paths(json.loads((GOLDEN / "analysis_v0.json").read_text()))
    after = key_paths(a)
    # keys inside a list that is empty here (no noisy set on this dataset) cannot show
    missing = {p for p in before - after if p.split("[]")[0] not in after}
    assert missing == set()
    assert {p.split("[]")[0] for p in before - after} <= after  # only empty lists' items
    store = Store(tmp_path / "s.db")
    import_csv(store, GOLDEN / "dataset.csv", "g")
    out = export(store, "g", tmp_path / "g.csv")
    assert out.read_text() == (GOLDEN / "export.csv").read_text()
    rec = RunRecord.from_dict(json.loads((GOLDEN / "record.json").read_text()))
    assert rec.to_json() == (GOLDEN / "record.json").read_text()


def _docs_engine() -> str:
    """The new-engine example of docs/extending.md, as a user would copy it."""
    text = (ROOT / "docs" / "extending.md").read_text()
    block = re.search(r"```python\n(.*?)```", text[text.index("A new engine, complete") :], re.S)
    assert block is not None
    return block.group(1)


TOY_WORKLOAD = """
from perflab.options import Opt
from perflab.workloads import WORKLOADS
from perflab.workloads.base import Workload


def toy_task(x):
    return x * 2


@WORKLOADS.register
class ToyDouble(Workload):
    name = "toy-double"
    params = {"x": Opt(default=21, help="The number doubled.")}

    def function(self):
        return toy_task

    def args(self):
        return (self.p["x"],)

    def check(self, result):
        return result == 42
"""

TOY_DESIGN = '''
from perflab.campaign.designs import DESIGNS
from perflab.campaign.designs.base import Design


@DESIGNS.register
class EachAlone(Design):
    """The empty set and each factor alone."""

    name = "toy-each-alone"

    def generate(self, cons, rng):
        return [[]] + [[f] for f in cons.factors]
'''


def _installed(tmp_path: Path, modules: dict[str, tuple[str, str]]) -> dict[str, str]:
    """A distribution in ``tmp_path`` (not in the package) with one module per plugin, each
    declared under its entry-point group: module name -> (group, source). The environment
    that makes it installed for a perflab subprocess."""
    site = tmp_path / "site"
    info = site / "perflab_toys-0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: perflab-toys\nVersion: 0\n")
    groups: dict[str, list[str]] = {}
    for module, (group, source) in modules.items():
        (site / f"{module}.py").write_text(source)
        groups.setdefault(group, []).append(f"{module} = {module}")
    (info / "entry_points.txt").write_text(
        "".join(f"[{g}]\n" + "\n".join(lines) + "\n\n" for g, lines in groups.items())
    )
    return {"PYTHONPATH": f"{ROOT / 'src'}:{site}"}


@pytest.fixture
def toy_plugins(tmp_path: Path) -> dict[str, str]:
    """One new file per plugin kind, installed beside perflab (nothing written into it)."""
    return _installed(
        tmp_path,
        {
            "toy_named_threads": ("perflab.engine", _docs_engine()),
            "toy_double": ("perflab.workload", TOY_WORKLOAD),
            "toy_each_alone": ("perflab.design", TOY_DESIGN),
        },
    )


def test_a_new_engine_workload_and_design_are_one_file_each(
    toy_plugins: dict[str, str], tmp_path: Path
) -> None:
    assert len(_docs_engine().splitlines()) <= 40  # the docs' engine, complete
    env = toy_plugins
    r = perflab(
        "run", "--target", "named-threads", "--workload", "toy-double", "--tasks", "50",
        "--warmup", "0", "--json", cwd=tmp_path, env=env,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    rec = json.loads(r.stdout)
    assert (rec["status"], rec["target"], rec["tasks"]) == ("ok", "named-threads", 50)
    r = perflab(
        "run", "--target", "named-threads", "--workload", "chain", "--tasks", "20",
        "--opt", "prefix=mine", "--warmup", "0", "--json", cwd=tmp_path, env=env,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr  # a DAG workload, through the dependency wrapper
    r = perflab("run", "--target", "named-threads", "--opt", "nope=1", cwd=tmp_path, env=env)
    assert r.returncode == 2 and "nope" in r.stderr
    help_text = re.sub(r"-\s+", "-", perflab("run", "--help-all", cwd=tmp_path, env=env).stdout)
    assert "named-threads" in help_text  # --help-all lists the registry
    r = perflab(
        "campaign", "create", "c", "--command", "echo 1", "--factors", "a,b",
        "--metric", "us_per_task",
        "--design", "toy-each-alone", "--json", cwd=tmp_path, env=env,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["counts"]["planned"] == 3


TOY_VERBS = '''
import click

from perflab.cli.app import main


@main.command("toy-hello")
@click.option("--who", default="world")
def toy_hello(who: str) -> None:
    """Say hello."""
    click.echo(f"hello {who}")


main.add_command(click.Command("toy-added", callback=lambda: click.echo("added")))
'''


@pytest.fixture
def toy_verbs(tmp_path: Path) -> dict[str, str]:
    return _installed(tmp_path, {"toy_verbs": ("perflab.cli", TOY_VERBS)})


def test_a_new_verb_group_is_one_installed_file(toy_verbs: dict[str, str], tmp_path: Path) -> None:
    r = perflab("toy-hello", "--who", "you", cwd=tmp_path, env=toy_verbs)
    assert (r.returncode, r.stdout) == (0, "hello you\n"), r.stderr
    r = perflab("toy-added", cwd=tmp_path, env=toy_verbs)
    assert (r.returncode, r.stdout) == (0, "added\n"), r.stderr
    listed = perflab("--help", cwd=tmp_path, env=toy_verbs).stdout
    assert "toy-hello" in listed and "toy-added" in listed and "analyze" in listed
    assert perflab("no-such-verb", cwd=tmp_path).returncode == 2


def test_a_verb_imports_only_its_own_module() -> None:
    code = (
        "import sys\nfrom perflab.cli import main\n"
        "try:\n    main(['analyze', '--help'])\nexcept SystemExit:\n    pass\n"
        "print(' '.join(m for m in sys.modules if m.startswith('perflab.cli.')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    loaded = set(out.stdout.splitlines()[-1].split())  # the help text, then the modules
    assert "perflab.cli.analyze" in loaded
    assert not loaded & {"perflab.cli.compare", "perflab.cli.zoo", "perflab.cli.tune"}


def test_the_verbs_read_from_the_sources_are_what_the_modules_register() -> None:
    from perflab.cli import app

    app.load_all()
    registered = {
        name: (cmd.callback.__module__ if cmd.callback else "").removeprefix("perflab.cli.")
        for name, cmd in app.main.commands.items()
        # old spellings added by add_command are found by importing every module
        if not cmd.hidden or name in ("calibrate", "metg")
    }
    assert registered == app.verb_modules()
    hidden = sorted(n for n, cmd in app.main.commands.items() if cmd.hidden)
    # the old spellings, kept for one release
    assert hidden == ["calibrate", "metg", "postprocess", "seed001"]
