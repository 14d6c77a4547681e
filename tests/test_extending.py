"""docs/extending.md, done: a new engine, figure, verb and search are each one new file in
their kind's folder, taken from the page as it stands, written into a copy of perflab's source
(the package itself is never written) and used through that copy."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from conftest import ROOT, perflab

SRC = ROOT / "src" / "perflab"
DOCS = ROOT / "docs" / "extending.md"
GOLDEN = Path(__file__).parent / "golden"


def docs_example(heading: str) -> tuple[str, str]:
    """The first Python block after ``heading`` in docs/extending.md: (its path inside
    ``src/``, from the block's first line, and its source)."""
    text = DOCS.read_text()
    block = re.search(r"```python\n(.*?)```", text[text.index(heading) :], re.S)
    assert block is not None, heading
    first = block.group(1).splitlines()[0]
    assert first.startswith("# src/perflab/"), first
    return first.removeprefix("# src/"), block.group(1)


def test_every_example_on_the_page_names_a_new_file_in_its_kinds_folder() -> None:
    folders = {
        "A new engine, complete": "perflab/engines/",
        "A new figure, complete": "perflab/report/figures/",
        "A new verb, complete": "perflab/cli/",
        "A new search for `perflab tune`, complete": "perflab/tune/searches/",
    }
    for heading, folder in folders.items():
        path, _ = docs_example(heading)
        assert path.startswith(folder) and path.count("/") == folder.count("/"), path
        assert not (ROOT / "src" / path).exists(), f"{path} is an example, not a plugin"


def _with(tmp_path: Path, heading: str) -> dict[str, str]:
    """A copy of perflab's source with the example under ``heading`` added as its file;
    the environment that imports perflab from the copy."""
    root = tmp_path / "src"
    shutil.copytree(SRC, root / "perflab", ignore=shutil.ignore_patterns("__pycache__"))
    path, code = docs_example(heading)
    (root / path).write_text(code)
    return {"PYTHONPATH": str(root)}


def _python(code: str, env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=300,
        cwd=cwd, env={**os.environ, **env},
    )  # fmt: skip


def test_a_new_engine_is_one_file(tmp_path: Path) -> None:
    env = _with(tmp_path, "A new engine, complete")
    r = _python("import perflab; print(perflab.__file__)", env, tmp_path)
    assert r.stdout.strip() == str(tmp_path / "src" / "perflab" / "__init__.py")  # the copy
    r = perflab(
        "run", "--target", "named-threads", "--workload", "noop", "--tasks", "20",
        "--warmup", "0", "--opt", "prefix=mine", "--json", cwd=tmp_path, env=env,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    rec = json.loads(r.stdout)
    assert (rec["status"], rec["target"], rec["tasks"]) == ("ok", "named-threads", 20)
    r = perflab("plugins", "engine", "named-threads", "--json", cwd=tmp_path, env=env)
    options = json.loads(r.stdout)["engine"]["named-threads"]
    assert {o["name"] for o in options} == {"workers", "prefix"}
    code = "from perflab.zoo.suite import default_targets; print(default_targets())"
    r = _python(code, env, tmp_path)
    assert "named-threads" in r.stdout, r.stderr  # it declares dependencies: in the zoo


def test_a_new_figure_is_one_file(tmp_path: Path) -> None:
    env = _with(tmp_path, "A new figure, complete")
    code = f"""
import json, pathlib
from perflab.campaign.source import open_source
from perflab.report.assemble import build
from perflab.report.figures import FIGURES
from perflab.report.render import draw

src = open_source({str(GOLDEN / "dataset.csv")!r}, None, "us_per_task")
ctx = build(src.dataset("us_per_task"), src.runs)
entry = draw(ctx, "run_order", pathlib.Path("figs"))
print(json.dumps({{"listed": "run_order" in FIGURES, "entry": sorted(entry)}}))
"""
    (tmp_path / "figs").mkdir()
    r = _python(code, env, tmp_path)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout.splitlines()[-1])
    assert out["listed"] and "reason" not in out["entry"] and "caption" in out["entry"]
    assert (tmp_path / "figs" / "run_order.png").stat().st_size > 0


def test_a_new_verb_is_one_file(tmp_path: Path) -> None:
    env = _with(tmp_path, "A new verb, complete")
    store = str(tmp_path / "s.db")
    r = perflab(
        "campaign", "create", "c1", "--command", "echo 1", "--factors", "a,b",
        "--metric", "us_per_task",
        "--design", "full", "--store", store, cwd=tmp_path, env=env,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    r = perflab("done", "c1", "--store", store, cwd=tmp_path, env=env)
    assert (r.returncode, r.stdout) == (0, "c1: 0 of 4 runs done\n"), r.stderr
    listed = perflab("--help", cwd=tmp_path, env=env).stdout
    assert re.search(r"^\s+done\s", listed, re.M) and "analyze" in listed
    # a verb still imports only its own module
    code = (
        "import sys\nfrom perflab.cli import main\n"
        "try:\n    main(['done', '--help'])\nexcept SystemExit:\n    pass\n"
        "print(' '.join(m for m in sys.modules if m.startswith('perflab.cli.')))"
    )
    loaded = set(_python(code, env, tmp_path).stdout.splitlines()[-1].split())
    assert "perflab.cli.done" in loaded and "perflab.cli.tune" not in loaded


def test_a_new_search_is_one_file(tmp_path: Path) -> None:
    env = _with(tmp_path, "A new search for `perflab tune`, complete")
    r = perflab("tune", "--help-all", cwd=tmp_path, env=env)
    assert "random-sets" in re.sub(r"\s+", " ", r.stdout), r.stderr
    code = """
import json
import numpy as np
from perflab.tune.searches import SEARCHES
from perflab.tune.truths import TRUTHS

tr, rng = TRUTHS["sparse"], np.random.default_rng(0)
res = SEARCHES.get("random-sets")(tr.factors, tr.cons, 120, seed=0).run(
    lambda sets, stage, reason: list(tr.measure(sets, rng))
)
best, base = tr.time(tr.matrix([res.best]))[0], tr.time(tr.matrix([[]]))[0]
print(json.dumps({"stages": [s.name for s in res.stages], "runs": res.runs,
                  "faster": bool(best < base)}))
"""
    r = _python(code, env, tmp_path)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout.splitlines()[-1])
    assert out["stages"][0] == "search" and out["stages"][-1] == "final"
    assert out["runs"] <= 120 and out["faster"]
