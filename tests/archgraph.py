"""The import graph of ``src/perflab`` and the parts of docs/architecture.md made from it.

Used by tests/test_architecture.py (no circles), tests/test_docs.py (the page matches the
graph) and ``scripts/archdoc`` (rewrites the page: ``python tests/archgraph.py --write``).

The page has two generated blocks, each between ``<!-- archdoc:NAME -->`` and
``<!-- /archdoc:NAME -->``:

* ``rooms``: the table of rooms. Its first two columns (folder, what it holds) are written
  by hand and kept; the third (what the room imports) is the graph's. A room that is new on
  disk gets a row whose description is the first sentence of its package docstring; a row
  whose folder is gone is dropped.
* ``layers``: the rooms drawn in layers, each importing only from the layers below it.
"""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src" / "perflab"
PAGE = ROOT / "docs" / "architecture.md"
TOP = "top"  # the modules directly under perflab/


def import_graph(src: Path = SRC) -> dict[str, set[str]]:
    """Module -> the perflab modules it imports, anywhere in its file (also inside functions
    and under TYPE_CHECKING). An import of a module's own ancestor package is left out:
    Python imports those first anyway."""
    paths = {
        ".".join(p.relative_to(src.parent).with_suffix("").parts).removesuffix(".__init__"): p
        for p in src.rglob("*.py")
    }
    graph: dict[str, set[str]] = {m: set() for m in paths}
    for module, path in paths.items():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                named = [f"{node.module}.{a.name}" for a in node.names]
                targets = [t for t in named if t in paths] or [node.module]
            elif isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            else:
                continue
            graph[module] |= {
                t for t in targets if t in paths and t != module and not module.startswith(t + ".")
            }
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One circle through each node that lies on one (a depth-first search's back edges)."""
    found, state = [], dict.fromkeys(graph, 0)  # 0 new, 1 on the path, 2 done

    def visit(node: str, path: list[str]) -> None:
        state[node] = 1
        for nxt in sorted(graph[node]):
            if state[nxt] == 1:
                found.append(path[path.index(nxt) :] + [nxt])
            elif state[nxt] == 0:
                visit(nxt, [*path, nxt])
        state[node] = 2

    for node in sorted(graph):
        if state[node] == 0:
            visit(node, [node])
    return found


def room(module: str, src: Path = SRC) -> str:
    """``perflab.run.measure`` and ``perflab.run`` (its ``__init__``) -> ``run``; a module
    directly under perflab (``perflab.errors``) -> ``top``."""
    parts = module.split(".")
    return parts[1] if len(parts) > 2 or (src / parts[-1]).is_dir() else TOP


def node(module: str, src: Path = SRC) -> str:
    """A room, or a top-level module by its own name (``errors``, ``api``): the nodes of the
    page's table and layers."""
    r = room(module, src)
    return module.split(".")[-1] if r == TOP and module != "perflab" else r


def room_graph(graph: dict[str, set[str]], src: Path = SRC) -> dict[str, set[str]]:
    """Room (or top-level module) -> the rooms and top-level modules it imports."""
    out: dict[str, set[str]] = {}
    for module, targets in graph.items():
        if module == "perflab":
            continue
        here = node(module, src)
        out.setdefault(here, set())
        out[here] |= {node(t, src) for t in targets if t != "perflab"} - {here}
    return out


def top_modules(graph: dict[str, set[str]], src: Path = SRC) -> list[str]:
    return sorted(node(m, src) for m in graph if room(m, src) == TOP and m != "perflab")


def layers(rooms: dict[str, set[str]]) -> list[list[str]]:
    """Layer 0 imports nothing; each node sits one layer above the highest it imports."""
    depth: dict[str, int] = {}

    def level(n: str) -> int:
        if n not in depth:
            depth[n] = 0  # a circle (the tests forbid them) would stop here
            depth[n] = 1 + max((level(t) for t in rooms[n]), default=-1)
        return depth[n]

    for n in rooms:
        level(n)
    out: list[list[str]] = [[] for _ in range(max(depth.values(), default=-1) + 1)]
    for n in sorted(rooms):
        out[depth[n]].append(n)
    return out


def _cell(names: set[str], tops: set[str]) -> str:
    if not names:
        return "—"
    folders = [f"`{n}/`" for n in sorted(names - tops)]
    return ", ".join(folders + [f"`{n}`" for n in sorted(names & tops)])


def _rows(block: str) -> dict[str, tuple[str, str]]:
    """The hand-written rows of the table: key -> (folder cell, holds cell)."""
    out = {}
    for line in block.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) < 2 or not cells[0].startswith("`"):
            continue
        out[cells[0].strip("`").rstrip("/")] = (cells[0], cells[1])
    return out


def _docstring(name: str, src: Path) -> str:
    path = src / name / "__init__.py"
    doc = ast.get_docstring(ast.parse(path.read_text())) if path.exists() else None
    first = re.split(r"(?<=\.)\s", " ".join((doc or "").split()), maxsplit=1)[0]
    return first.replace("|", "\\|") or "(no package docstring yet)"


def rooms_table(graph: dict[str, set[str]], old_block: str, src: Path = SRC) -> str:
    rooms = room_graph(graph, src)
    tops = set(top_modules(graph, src))
    hand = _rows(old_block)
    lines = [
        "| folder | holds | imports (from the import graph) |",
        "|---|---|---|",
    ]
    folders = [n for n in sorted(rooms) if n not in tops]
    ordered = [k for k in hand if k in folders] + [k for k in folders if k not in hand]
    for key in ordered:
        folder, holds = hand.get(key, (f"`{key}/`", _docstring(key, src)))
        lines.append(f"| {folder} | {holds} | {_cell(rooms[key], tops)} |")
    for key in sorted(tops):
        folder, holds = hand.get(key, (f"`{key}`", "(top-level module)"))
        lines.append(f"| {folder} | {holds} | {_cell(rooms[key], tops)} |")
    return "\n".join(lines)


def layers_diagram(graph: dict[str, set[str]], src: Path = SRC) -> str:
    rooms = room_graph(graph, src)
    tops = set(top_modules(graph, src))
    rows = layers(rooms)
    width = max(len(str(len(rows))), 1)
    lines = ["```"]
    for i in reversed(range(len(rows))):
        names = "  ".join(n if n in tops else f"{n}/" for n in rows[i])
        lines.append(f"{i:>{width}}  {names}")
    lines.append("```")
    return "\n".join(lines)


BLOCK = re.compile(r"(<!-- archdoc:(\w+) -->\n)(.*?)(^<!-- /archdoc:\2 -->)", re.S | re.M)


def render(page: str, graph: dict[str, set[str]], src: Path = SRC) -> str:
    """The page with its generated blocks made from ``graph``."""

    def fill(m: re.Match[str]) -> str:
        kind, old = m.group(2), m.group(3)
        new = rooms_table(graph, old, src) if kind == "rooms" else layers_diagram(graph, src)
        return m.group(1) + new + "\n" + m.group(4)

    blocks = {m.group(2) for m in BLOCK.finditer(page)}
    if blocks != {"rooms", "layers"}:
        raise ValueError(f"docs/architecture.md: generated blocks {sorted(blocks)}")
    return BLOCK.sub(fill, page)


def pipeline_rooms_missing(page: str, graph: dict[str, set[str]], src: Path = SRC) -> list[str]:
    """Rooms that the hand-drawn pipeline diagram (the page's first code block) leaves out."""
    block = re.search(r"```\n(.*?)```", page, re.S)
    drawn = block.group(1) if block else ""
    folders = {room(m, src) for m in graph} - {TOP}
    return sorted(r for r in folders if not re.search(rf"\b{r}/", drawn))


def main(argv: list[str]) -> int:
    page = PAGE.read_text()
    new = render(page, import_graph())
    if "--write" in argv:
        if new != page:
            PAGE.write_text(new)
            print(f"rewrote {PAGE.relative_to(ROOT)}")
        else:
            print(f"{PAGE.relative_to(ROOT)} already matches the import graph")
    elif new != page:
        print(f"{PAGE.relative_to(ROOT)} differs from the import graph: run scripts/archdoc")
        return 1
    missing = pipeline_rooms_missing(new, import_graph())
    if missing:
        print(f"the pipeline diagram leaves out {', '.join(missing)}: draw them in by hand")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
