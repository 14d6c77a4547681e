"""Docs that cannot drift: the site builds offline with every link checked, the architecture
page matches the import graph, links stay inside the repository, and the commands the front
pages show parse."""

from __future__ import annotations

import ast
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import click
import pytest

import archgraph
from conftest import ROOT

PAGES = sorted(
    [ROOT / "README.md", ROOT / "CONTRIBUTING.md", ROOT / "CHANGELOG.md"]
    + [p for p in (ROOT / "docs").rglob("*.md") if not {"compare", "transforms"} & set(p.parts)]
)


@pytest.mark.slow
def test_the_docs_site_builds_offline_with_every_link_checked(tmp_path: Path) -> None:
    """``mkdocs build --strict``: a broken link or anchor, a page left out of the nav, a
    docstring mkdocstrings cannot read fails. The site fetches nothing from the network."""
    site = tmp_path / "site"
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "NO_COLOR": "1"}
    proc = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-q", "-d", str(site)],
        cwd=ROOT, capture_output=True, text=True, env=env, timeout=300,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    fetched = set()
    for page in site.rglob("*.html"):
        text = page.read_text()
        fetched |= set(
            re.findall(r"<(?:script|img|link|iframe)[^>]+(?:src|href)=\"(https?:[^\"]+)", text)
        )
    assert fetched == set()  # every script, style sheet, font and image is in the site
    for css in site.rglob("*.css"):
        assert not re.search(r"url\(['\"]?https?:", css.read_text()), css
    # every visible verb's help is on the generated page, and each docs page became a page
    helps = (site / "reference" / "cli.html").read_text()
    from perflab.cli.app import main

    visible = main.list_commands(click.Context(main))
    for verb in visible:
        if not main.commands[verb].hidden:
            assert f"<code>perflab {verb}</code>" in helps, verb
    for md in _doc_pages():
        assert (site / md.with_suffix(".html")).exists(), md
    api = (site / "reference" / "api" / "run.html").read_text()
    assert "perflab.run.measure" in api  # the reference is made from the code


def _doc_pages() -> list[Path]:
    """Every page of docs/ (its folders too: guide/, lab/), relative to docs/; the folders of
    measured data (exclude_docs in mkdocs.yml) hold no pages."""
    data = {"compare", "perf", "transforms", "postprocess", "reference"}
    return sorted(
        p.relative_to(ROOT / "docs")
        for p in (ROOT / "docs").rglob("*.md")
        if not data & set(p.relative_to(ROOT / "docs").parts[:-1])
    )


def _links(text: str) -> list[str]:
    """The targets of Markdown links and images, outside code blocks and code spans."""
    text = re.sub(r"```.*?```", "", text, flags=re.S)
    text = re.sub(r"`[^`\n]*`", "", text)
    return re.findall(r"\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)", text)


def test_no_page_links_outside_the_repository() -> None:
    """Every link of the README, CONTRIBUTING, the CHANGELOG and docs/ is relative and lands
    on a file of this repository (the site's build checks anchors within docs/)."""
    bad = []
    for page in PAGES:
        for target in _links(page.read_text()):
            if target.startswith("#"):
                continue
            path = target.split("#")[0]
            resolved = (page.parent / path).resolve()
            if resolved.is_relative_to(ROOT / "docs" / "reference"):
                continue  # made by the build (scripts/mkdocs_hooks.py), which checks them
            if (
                re.match(r"^[a-z][a-z0-9+.-]*:", target)  # http:, file:, mailto: ...
                or path.startswith(("/", "~"))
                or not resolved.is_relative_to(ROOT)
                or not resolved.exists()
            ):
                bad.append(f"{page.relative_to(ROOT)}: {target}")
    assert bad == []


def test_every_docs_file_named_anywhere_exists() -> None:
    """A ``docs/NAME.md`` named in prose, code or a docstring (README, CONTRIBUTING, docs,
    src, tests, scripts, bench) is a file of docs/: renaming a page breaks this test, not a
    reader's path."""
    named: dict[str, set[str]] = {}
    places = [*PAGES, *ROOT.glob("src/perflab/**/*.py"), *ROOT.glob("tests/**/*.py")]
    places += [*ROOT.glob("bench/*.py"), *(p for p in ROOT.glob("scripts/*") if p.is_file())]
    for path in places:
        for name in re.findall(
            r"\bdocs/([a-z0-9][\w./-]*?\.md)\b", path.read_text(errors="replace")
        ):
            named.setdefault(name, set()).add(str(path.relative_to(ROOT)))
    missing = {n: sorted(w) for n, w in named.items() if not (ROOT / "docs" / n).exists()}
    assert missing == {}


def test_every_docs_page_is_in_the_nav() -> None:
    """mkdocs warns (and --strict fails) on a page left out of the nav; this says which,
    without a build."""
    config = (ROOT / "mkdocs.yml").read_text()
    listed = set(re.findall(r":\s*\"?([\w/.-]+\.md)\"?\s*$", config, re.M))
    pages = {str(p) for p in _doc_pages()}
    assert pages - listed == set()
    # a page in a folder (lab/…) is listed by its path; the generated reference/ is not there
    there = {p for p in listed if (ROOT / "docs" / p).is_file()}
    assert {p for p in listed if not p.startswith("reference/")} - pages - there == set()


def _commands(page: Path) -> list[list[str]]:
    """Each ``perflab ...`` line of the page's bash blocks, continuation lines joined."""
    out = []
    for block in re.findall(r"```bash\n(.*?)```", page.read_text(), re.S):
        for line in block.replace("\\\n", " ").splitlines():
            line = line.split("  #")[0].strip()
            if line.startswith("perflab "):
                out.append(shlex.split(line)[1:])
    return out


def _parse(args: list[str]) -> None:
    """Parse a command line down to its verb, as the CLI would, without running it."""
    from perflab.cli.app import main

    cmd: click.Command = main
    name, ctx = "perflab", None
    while True:
        try:
            ctx = cmd.make_context(name, list(args), parent=ctx)
        except click.exceptions.Exit:  # --help, --version
            return
        if not isinstance(cmd, click.Group):
            return
        rest = [*getattr(ctx, "_protected_args", []), *ctx.args]
        name, sub, args = cmd.resolve_command(ctx, rest)
        assert sub is not None and name is not None
        cmd = sub


@pytest.mark.parametrize("page", ["README.md", "docs/index.md"])
def test_the_front_pages_commands_parse(page: str) -> None:
    commands = _commands(ROOT / page)
    assert len(commands) >= 5
    for args in commands:
        try:
            _parse(args)
        except click.UsageError as exc:
            pytest.fail(f"{page}: perflab {shlex.join(args)}: {exc}")


def test_the_command_parser_refuses_a_wrong_option() -> None:
    with pytest.raises(click.UsageError):
        _parse(["run", "--no-such-option"])
    with pytest.raises(click.UsageError):
        _parse(["campaign", "no-such-verb"])
    _parse(["campaign", "create", "c1", "--factors", "a,b", "--runs", "3"])


# -- the architecture page and the import graph ------------------------------------------


def test_the_architecture_page_matches_the_import_graph() -> None:
    page = archgraph.PAGE.read_text()
    graph = archgraph.import_graph()
    assert archgraph.render(page, graph) == page, "the import graph changed: run scripts/archdoc"
    assert archgraph.pipeline_rooms_missing(page, graph) == []


def _planted(tmp_path: Path, where: str, line: str) -> Path:
    """A copy of src/perflab with ``line`` appended to the module file ``where``."""
    src = tmp_path / "perflab"
    shutil.copytree(archgraph.SRC, src, ignore=shutil.ignore_patterns("__pycache__"))
    target = src / where
    target.parent.mkdir(parents=True, exist_ok=True)
    with target.open("a") as f:
        f.write(line)
    return src


def test_a_planted_import_fails_the_check_and_the_generator_writes_it(tmp_path: Path) -> None:
    page = archgraph.PAGE.read_text()
    # inside a function, where only a walk of every node sees it
    src = _planted(tmp_path, "tasks/__init__.py", "\n\ndef _f():\n    import perflab.tune.driver\n")
    planted = archgraph.import_graph(src)
    assert "perflab.tune.driver" in planted["perflab.tasks"]
    rendered = archgraph.render(page, planted, src)
    assert rendered != page  # the check fails
    row = next(line for line in rendered.splitlines() if line.startswith("| `tasks/`"))
    assert row.endswith("| `tune/`, `errors` |")
    assert archgraph.render(rendered, planted, src) == rendered  # regenerated: it passes
    assert archgraph.render(rendered, archgraph.import_graph()) == page  # hand cells kept


def test_a_new_room_gets_a_row_and_must_be_drawn(tmp_path: Path) -> None:
    page = archgraph.PAGE.read_text()
    src = _planted(
        tmp_path, "toyroom/__init__.py", '"""Toy room: a new stage. More."""\n'
        "from perflab.spec import RunSpec\n",
    )  # fmt: skip
    graph = archgraph.import_graph(src)
    rendered = archgraph.render(page, graph, src)
    assert "| `toyroom/` | Toy room: a new stage. | `spec` |" in rendered
    assert " toyroom/" in rendered.split("<!-- archdoc:layers -->")[1]
    assert archgraph.pipeline_rooms_missing(rendered, graph, src) == ["toyroom"]


def test_every_perflab_import_the_docs_show_exists() -> None:
    """The Python snippets of the pages import names that exist: a renamed function breaks
    this test, not a reader's notebook."""
    import importlib

    missing = []
    for page in PAGES:
        for block in re.findall(r"```python\n(.*?)```", page.read_text(), re.S):
            try:
                tree = ast.parse(block)
            except SyntaxError:
                continue  # a fragment, not a program
            for node in ast.walk(tree):
                if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("perflab"):
                    assert node.module is not None
                    module = importlib.import_module(node.module)
                    for alias in node.names:
                        if not hasattr(module, alias.name):
                            try:
                                importlib.import_module(f"{node.module}.{alias.name}")
                            except ImportError:
                                missing.append(f"{page.name}: {node.module}.{alias.name}")
    assert missing == []
