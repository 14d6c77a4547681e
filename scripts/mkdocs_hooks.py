"""MkDocs hooks (mkdocs.yml: ``hooks``): pages made from the code at build time.

* ``reference/cli.md``: every verb's ``--help``, as click prints it, walked from the
  ``perflab`` group (hidden old spellings left out), so the page cannot fall behind the CLI.
* ``reference/api/index.md`` and one page per room of ``src/perflab`` (and one for the
  top-level modules): the API reference from docstrings, through mkdocstrings. A new room
  gets its page without an edit here.

Nothing is written into docs/: the pages exist only in the build.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from mkdocs.structure.files import File, Files, InclusionLevel

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src" / "perflab"
WIDTH = 100


def on_config(config: Any) -> Any:
    # the checkout's own perflab, whatever the environment has installed
    if str(ROOT / "src") not in sys.path:
        sys.path.insert(0, str(ROOT / "src"))
    return config


def _helps(cmd: Any, path: list[str], parent: Any = None) -> Iterator[tuple[str, str]]:
    import click

    ctx = click.Context(
        cmd, info_name=path[-1], parent=parent, terminal_width=WIDTH, max_content_width=WIDTH
    )
    # the reference shows every option, as `--help-all` does where a verb's `--help` is short
    # (cli/helpfmt.py reads this key; a CLI without it ignores it). ctx.meta is shared down
    # the chain of contexts, so the root's setting holds for every verb.
    ctx.meta["perflab.help_all"] = True
    yield " ".join(path), cmd.get_help(ctx)
    if isinstance(cmd, click.Group):
        for name in cmd.list_commands(ctx):
            sub = cmd.get_command(ctx, name)
            if sub is not None and not sub.hidden:
                yield from _helps(sub, [*path, name], ctx)


def cli_page() -> str:
    from perflab.cli.app import main

    out = [
        "# Every verb's `--help`",
        "",
        "Generated when the docs are built, from the `perflab` command itself: every option",
        "of every verb (what `perflab VERB --help-all` prints; `--help` shows the common ones).",
        "The words every verb shares: [One CLI vocabulary](../cli.md).",
        "",
    ]
    for name, text in _helps(main, ["perflab"]):
        out += [f"## `{name}`", "", "```text", text.rstrip(), "```", ""]
    return "\n".join(out)


def _doc_line(path: Path) -> str:
    doc = ast.get_docstring(ast.parse(path.read_text())) or ""
    return " ".join(doc.split("\n\n")[0].split())


def rooms() -> list[str]:
    return sorted(p.name for p in SRC.iterdir() if (p / "__init__.py").exists())


def top_modules() -> list[str]:
    return sorted(p.stem for p in SRC.glob("*.py") if p.stem not in ("__init__", "__main__"))


def api_pages() -> dict[str, str]:
    pages = {}
    index = [
        "# API reference",
        "",
        "Made from the docstrings when the docs are built: one page per room of",
        "`src/perflab` (see [Architecture](../../architecture.md)), and one for the top-level",
        "modules. How to call the verbs from Python: [Python API](../../python-api.md).",
        "",
        "| page | what it holds |",
        "|---|---|",
        f"| [top-level modules](top.md) | {', '.join(f'`{m}`' for m in top_modules())} |",
    ]
    for room in rooms():
        line = _doc_line(SRC / room / "__init__.py").replace("|", "\\|")
        index.append(f"| [`{room}/`]({room}.md) | {line} |")
        pages[f"{room}.md"] = "\n".join(
            [
                f"::: perflab.{room}",
                "    options:",
                "      heading_level: 1",
                "      show_submodules: true",
                "",
            ]
        )
    pages["top.md"] = "\n".join(
        ["# Top-level modules", ""] + [f"::: perflab.{m}\n" for m in top_modules()]
    )
    pages["index.md"] = "\n".join(index) + "\n"
    return pages


def on_files(files: Files, config: Any) -> Files:
    files.append(File.generated(config, "reference/cli.md", content=cli_page()))
    for name, text in api_pages().items():
        inclusion = InclusionLevel.INCLUDED if name == "index.md" else InclusionLevel.NOT_IN_NAV
        files.append(
            File.generated(config, f"reference/api/{name}", content=text, inclusion=inclusion)
        )
    return files
