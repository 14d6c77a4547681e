"""The docs' shape (issue 51): the manual's and the guide's pages stay short, the lab's notes
live in docs/lab/, the "which verb" table is one table naming every verb, the engines page
lists every registered engine, and the glossary defines the words the pages lean on."""

from __future__ import annotations

import re
from pathlib import Path

import click

from conftest import ROOT

DOCS = ROOT / "docs"
MOST_LINES = 400


def _manual_and_guide() -> list[Path]:
    return sorted([*DOCS.glob("*.md"), *(DOCS / "guide").glob("*.md")])


def test_every_manual_and_guide_page_is_at_most_400_lines() -> None:
    """A page that grows past 400 lines is a manual page with a lab notebook inside it: its
    measurements go to docs/lab/ (the lab's pages have no limit)."""
    long = {
        str(p.relative_to(DOCS)): n
        for p in _manual_and_guide()
        if (n := len(p.read_text().splitlines())) > MOST_LINES
    }
    assert long == {}
    assert len(_manual_and_guide()) > 20  # the glob found the pages


def test_the_guide_has_a_path_per_persona_and_the_lab_its_pages() -> None:
    guide = {p.name for p in (DOCS / "guide").glob("*.md")}
    assert {"index.md", "tuning.md", "slowdown.md", "own-program.md"} <= guide
    lab = {p.name for p in (DOCS / "lab").glob("*.md")}
    assert {"index.md", "precision.md", "tune.md", "bisect.md", "compare.md"} <= lab
    nav = (ROOT / "mkdocs.yml").read_text()
    for part in ("- Guide:", "- Reference:", "- The lab's measurements:"):
        assert re.search(rf"^  {re.escape(part)}$", nav, re.M), part


def _verb_table(text: str) -> str:
    """The table under the heading "Which verb?": its first run of ``|`` lines."""
    rows: list[str] = []
    for line in text.split("## Which verb?", 1)[1].splitlines():
        if line.startswith("|"):
            rows.append(line)
        elif rows:
            break
    return "\n".join(rows)


def test_the_which_verb_table_is_one_table_naming_every_verb() -> None:
    """The README's and the docs index's tables are the same, and every verb the CLI shows is
    in it (a new verb without a row fails here)."""
    from perflab.cli.app import main

    readme = _verb_table((ROOT / "README.md").read_text())
    index = _verb_table((DOCS / "index.md").read_text())
    assert readme == index
    assert readme.startswith("| I want to … | verb |")
    named = set(re.findall(r"`perflab ([a-z-]+)", readme)) | set(
        re.findall(r"`([a-z-]+) [a-z-]+`", readme)
    )
    visible = {
        name for name in main.list_commands(click.Context(main)) if not main.commands[name].hidden
    }
    old_names = {"calibrate", "metg"}  # aliases: the table names them beside their new verb
    assert visible - old_names - named == set()
    for old in old_names & visible:
        assert f"`{old}`" in readme, old


def test_measuring_lists_every_registered_engine() -> None:
    from perflab.engines import ENGINES

    page = (DOCS / "measuring.md").read_text()
    rows = "\n".join(line for line in page.splitlines() if line.startswith("| `"))
    listed = set(re.findall(r"`([a-z0-9-]+)`", rows))
    assert set(ENGINES.names()) - listed == set()
    assert len(ENGINES.names()) >= 9


def test_the_glossary_defines_the_words_the_pages_lean_on() -> None:
    glossary = (DOCS / "glossary.md").read_text()
    terms = set(re.findall(r"^## (.+)$", glossary, re.M))
    wanted = {"treatment", "design", "A/A", "ABBA", "METG", "precision", "parts", "culprit"}
    wanted |= {"hunk", "PELT", "TPE", "the seed"}
    assert {w for w in wanted if not any(t.startswith(w) for t in terms)} == set()
    assert any(t.startswith("set") for t in terms)
    # the front page and the lab's index send a reader to it
    assert "glossary.md" in (DOCS / "index.md").read_text()
    assert "glossary.md" in (DOCS / "lab" / "index.md").read_text()


def test_the_front_pages_loop_is_the_readmes_tour() -> None:
    """docs/index.md's loop is not run by itself: each of its lines is one of the README's
    tour, which tests/test_docs_tour.py runs."""
    from test_docs_tour import run_blocks

    tour = "".join(run_blocks((ROOT / "README.md").read_text())).replace("\\\n", " ")
    tour_lines = {" ".join(line.split("#")[0].split()) for line in tour.splitlines()}
    index = (DOCS / "index.md").read_text()
    loop = re.findall(r"```bash\n(.*?)```", index, re.S)[0].replace("\\\n", " ")
    lines = [" ".join(line.split("#")[0].split()) for line in loop.splitlines()]
    assert len(lines) >= 5
    assert [line for line in lines if line not in tour_lines] == []


def test_every_command_of_the_guide_parses() -> None:
    """The guide's blocks that are not run (release venvs, clones, hours) still parse, as the
    CLI would parse them: a renamed or misspelt option fails here."""
    from test_docs import _commands, _parse

    failed, seen = [], 0
    for page in sorted((DOCS / "guide").glob("*.md")):
        for args in _commands(page):
            seen += 1
            try:
                _parse(args)
            except click.UsageError as exc:
                failed.append(f"{page.name}: perflab {' '.join(args)}: {exc}")
    assert seen >= 15
    assert failed == []


def test_the_generated_reference_shows_every_option_of_every_verb() -> None:
    """The site's page of every verb's help (scripts/mkdocs_hooks.py) is the whole reference:
    where a verb's ``--help`` is short, the page still lists each of its options."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("hooks", ROOT / "scripts" / "mkdocs_hooks.py")
    assert spec is not None and spec.loader is not None
    hooks = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(hooks)
    page = hooks.cli_page()
    sections = dict(re.findall(r"^## `(perflab[^`]*)`\n\n```text\n(.*?)^```", page, re.S | re.M))
    from perflab.cli.app import main

    missing, seen = [], 0

    def walk(cmd: click.Command, path: str, parent: click.Context | None) -> None:
        nonlocal seen
        ctx = click.Context(cmd, info_name=path.split()[-1], parent=parent)
        text = sections[path]
        for param in cmd.params:
            if isinstance(param, click.Option) and not param.hidden:
                seen += 1
                if not any(name in text for name in param.opts):
                    missing.append(f"{path} {param.opts[0]}")
        if isinstance(cmd, click.Group):
            for name in cmd.list_commands(ctx):
                sub = cmd.get_command(ctx, name)
                if sub is not None and not sub.hidden:
                    walk(sub, f"{path} {name}", ctx)

    walk(main, "perflab", None)
    assert seen > 200
    assert missing == []
