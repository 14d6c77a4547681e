"""Transform ops that put code in: another release's version of a function
(``replace_function``) and module-level statements it needs (``add_statement``), for
``perflab explain``; a statement at the top of a function's loops (``add_to_loop``: a check
on each poll, such as the interchange's exit polling); and moving code left or right without
touching multi-line strings. Pure: source text in, source text and a count out
(``transforms.apply`` calls them)."""

from __future__ import annotations

import ast
from typing import Any

from perflab.errors import PerflabError


def _check_code(op: str, table: dict[str, Any], where: str) -> None:
    """replace_function: `function` (a qualified name) and `value` (a whole ``def``);
    add_statement: `value` (module-level statements); add_to_loop: `function` and `value`
    (statements)."""
    if op in ("replace_function", "add_to_loop") and not table.get("function"):
        raise PerflabError(f"{where}: transform {op} needs `function`")
    try:
        body = ast.parse(str(table.get("value", ""))).body
    except SyntaxError:
        raise PerflabError(f"{where}: transform {op} value is not Python") from None
    kinds = ast.FunctionDef | ast.AsyncFunctionDef
    if not body or (op == "replace_function" and not isinstance(body[0], kinds)):
        raise PerflabError(
            f"{where}: transform {op} value must be a def"
            if op == "replace_function"
            else f"{where}: transform {op} value is empty"
        )


def string_interior(text: str) -> set[int]:
    """Line numbers (1-based) inside a multi-line string literal of ``text``: their leading
    blanks are the string's, so moving code left or right must leave them alone."""
    import io
    import tokenize

    out: set[int] = set()
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.type == tokenize.STRING or tok.type == getattr(tokenize, "FSTRING_MIDDLE", -1):
                out.update(range(tok.start[0] + 1, tok.end[0] + 1))
    except (tokenize.TokenError, SyntaxError):
        pass
    return out


def shift(text: str, col: int) -> str:
    """``text`` moved ``col`` columns right (left if negative), code lines only."""
    inside = string_interior(text)
    out = []
    for i, ln in enumerate(text.splitlines(keepends=True), 1):
        if i in inside or not ln.strip():
            out.append(ln)
        elif col >= 0:
            out.append(" " * col + ln)
        else:
            out.append(ln[min(-col, len(ln) - len(ln.lstrip(" "))) :])
    return "".join(out)


def _indent(text: str, col: int) -> list[str]:
    return shift(text, col).splitlines(keepends=True)


def replace_function(source: str, qualname: str, new: str) -> tuple[str, int]:
    """The function ``qualname`` (``Class.method`` or ``f``; decorators included) replaced by
    ``new`` (a dedented ``def``), or, where the module lacks it, added at the end of its class
    or module (before a ``__main__`` guard, which runs as the module does: a function defined
    after it is not there yet when run as a script, as HTEX runs its interchange): how
    another release's version of one function is put back (``perflab explain``). 0 changes
    when the class is missing too."""
    tree = ast.parse(source)
    lines = source.splitlines(keepends=True)
    text = new if new.endswith("\n") else new + "\n"
    for fn, qual in _defs(tree):
        if qual == qualname:
            first = min([fn.lineno, *(d.lineno for d in fn.decorator_list)])
            assert fn.end_lineno is not None
            lines[first - 1 : fn.end_lineno] = _indent(text, fn.col_offset)
            return "".join(lines), 1
    owner, _, _ = qualname.rpartition(".")
    if not owner:
        guard = next((n for n in tree.body if _is_main_guard(n)), None)
        if guard is None:
            return source + ("" if source.endswith("\n") else "\n") + "\n\n" + text, 1
        lines[guard.lineno - 1 : guard.lineno - 1] = [text, "\n\n"]
        return "".join(lines), 1
    cls = _class(tree, owner)
    if cls is None or cls.end_lineno is None:
        return source, 0
    col = cls.body[0].col_offset
    lines[cls.end_lineno : cls.end_lineno] = ["\n", *_indent(text, col)]
    return "".join(lines), 1


def _is_main_guard(node: ast.stmt) -> bool:
    """``if __name__ == "__main__":`` (either way round)."""
    if not isinstance(node, ast.If) or not isinstance(node.test, ast.Compare):
        return False
    sides = [node.test.left, *node.test.comparators]
    names = {s.id for s in sides if isinstance(s, ast.Name)}
    consts = {s.value for s in sides if isinstance(s, ast.Constant)}
    return names == {"__name__"} and consts == {"__main__"}


def _class(tree: ast.AST, qualname: str) -> ast.ClassDef | None:
    body: list[ast.stmt] = getattr(tree, "body", [])
    found: ast.ClassDef | None = None
    for part in qualname.split("."):
        found = next((n for n in body if isinstance(n, ast.ClassDef) and n.name == part), None)
        if found is None:
            return None
        body = found.body
    return found


def add_statement(source: str, new: str) -> tuple[str, int]:
    """``new`` (module-level statements, e.g. an import another release had) inserted after
    the module's last top-level import; 0 changes when it is there already."""
    tree = ast.parse(source)
    if ast.dump(ast.parse(new)) in {ast.dump(ast.Module([n], [])) for n in tree.body}:
        return source, 0
    imports = [n for n in tree.body if isinstance(n, ast.Import | ast.ImportFrom)]
    at = imports[-1].end_lineno if imports else 0
    lines = source.splitlines(keepends=True)
    lines[at:at] = [new if new.endswith("\n") else new + "\n"]
    return "".join(lines), 1


def add_to_loop(source: str, qualname: str, new: str) -> tuple[str, int]:
    """``new`` (statements) made the first statements of every ``while`` loop directly in the
    function ``qualname`` (``Class.method``; a glob such as ``Class.*`` is allowed), so it runs
    on each iteration; loops of nested functions are left alone. One change per loop; 0 when
    the function or its loops are missing, or the statement is there already."""
    import fnmatch

    lines = source.splitlines(keepends=True)
    first = ast.parse(new).body[0]
    spots: list[tuple[int, int]] = []
    for fn, qual in _defs(ast.parse(source)):
        # a glob's * stays within one name: Class.* is not Class.method.inner
        if qual.count(".") != qualname.count(".") or not fnmatch.fnmatchcase(qual, qualname):
            continue
        for loop in _own_loops(fn):
            if ast.dump(loop.body[0]) != ast.dump(first):
                spots.append((loop.body[0].lineno, loop.body[0].col_offset))
    text = new if new.endswith("\n") else new + "\n"
    for line, col in sorted(spots, reverse=True):
        lines[line - 1 : line - 1] = _indent(text, col)
    return "".join(lines), len(spots)


def _own_loops(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> list[ast.While]:
    """The ``while`` loops of ``fn``'s own body (not of functions or classes inside it)."""
    out: list[ast.While] = []
    todo: list[ast.AST] = list(fn.body)
    while todo:
        node = todo.pop()
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.Lambda):
            continue
        if isinstance(node, ast.While):
            out.append(node)
        todo.extend(ast.iter_child_nodes(node))
    return out


def _defs(tree: ast.AST) -> list[tuple[ast.FunctionDef | ast.AsyncFunctionDef, str]]:
    """Every function of ``tree`` with its qualified name (``Class.method``, ``f.inner``)."""
    out: list[tuple[ast.FunctionDef | ast.AsyncFunctionDef, str]] = []

    def visit(node: ast.AST, scope: list[str]) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                name = [*scope, child.name]
                if not isinstance(child, ast.ClassDef):
                    out.append((child, ".".join(name)))
                visit(child, name)

    visit(tree, [])
    return out
