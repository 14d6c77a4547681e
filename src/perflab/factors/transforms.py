"""Source transforms: a change to a package's source described by what it does, not by a diff.

A diff is pinned to the release it was made against; a transform ("remove the DEBUG/INFO
logger calls that mention X in module M", "make these logger calls lazy", "set this keyword
default to V") is applied through the module's syntax tree to whatever version a run uses —
the installed release, a release in a cached venv, or a developer's checkout — and says how
many places it changed. A transform that matches nothing is an error, never a silent no-op.

Everything here is pure: source text in, source text and counts out. Applying it to a
private copy of a package is ``prepare/transformed.py``'s job.
"""

from __future__ import annotations

import ast
import fnmatch
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from perflab.errors import PerflabError
from perflab.factors.code_ops import _check_code, add_statement, add_to_loop, replace_function

#: Names a logger goes by in the code perflab transforms (``logger.debug``, ``self.log.info``).
LOGGER_NAMES = frozenset({"logger", "log", "_logger", "LOGGER"})
LEVELS = ("debug", "info", "warning", "error", "exception", "critical")
OPS = (
    "remove_log_calls", "lazy_log_calls", "set_default", "set_constant",
    "replace_function", "add_statement", "replace_module", "add_to_loop",
)  # fmt: skip


@dataclass(frozen=True)
class Transform:
    """One source change. ``module`` is a dotted module name of ``package`` (a glob such as
    ``parsl.executors.high_throughput.*`` is allowed for the log operations)."""

    package: str
    op: str
    module: str
    #: remove/lazy: substrings of the call's source; a call is taken if any matches (none
    #: given: every call at ``levels``).
    match: tuple[str, ...] = ()
    levels: tuple[str, ...] = ("debug", "info")
    #: remove/lazy: a call containing any of these is not taken (one call whose every
    #: literal another call also holds: ``launched on executor`` but not ``with executor id``)
    exclude: tuple[str, ...] = ()
    #: remove/lazy: only inside this function (``Class.method`` or a glob); set_default: the
    #: function whose keyword default changes.
    function: str | None = None
    #: set_default: the keyword; set_constant: the module-level name.
    name: str | None = None
    #: set_default / set_constant: the new value (a Python literal; with ``extra["expr"]``,
    #: the text of a Python expression such as ``{}``).
    value: Any = None
    extra: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)

    def describe(self) -> str:
        what = {
            "remove_log_calls": "remove logger calls",
            "lazy_log_calls": "make logger calls lazy",
            "set_default": f"set default {self.function}({self.name}=…) to {self.value!r}",
            "set_constant": f"set {self.name} to {self.value!r}",
            "replace_function": f"replace function {self.function} by another version's",
            "add_statement": f"add the statement {str(self.value)[:40]!r}",
            "replace_module": "replace the whole module by another version's",
            "add_to_loop": f"check {str(self.value)[:40]!r} on each loop of {self.function}",
        }[self.op]
        sel = f" matching {list(self.match)}" if self.match else ""
        inside = f" in {self.function}" if self.function and "log" in self.op else ""
        return f"{what}{sel}{inside} ({self.module})"


def parse_transform(table: dict[str, Any], where: str) -> Transform:
    """A catalog's ``transform`` table as a Transform (PerflabError naming ``where``)."""
    known = {"package", "op", "module", "match", "levels", "function", "name", "value", "expr",
             "exclude"}  # fmt: skip
    unknown = sorted(set(table) - known)
    if unknown:
        raise PerflabError(f"{where}: transform has no key {', '.join(unknown)}")
    for key in ("package", "op", "module"):
        if not isinstance(table.get(key), str) or not table[key]:
            raise PerflabError(f"{where}: transform needs `{key}` (a string)")
    op = table["op"]
    if op not in OPS:
        raise PerflabError(f"{where}: transform op {op!r} is not one of {', '.join(OPS)}")
    match = table.get("match", [])
    match = [match] if isinstance(match, str) else match
    levels = table.get("levels", ["debug", "info"])
    if not all(isinstance(m, str) for m in match) or any(lv not in LEVELS for lv in levels):
        raise PerflabError(f"{where}: transform `match` must be strings, `levels` of {LEVELS}")
    if op in ("set_default", "set_constant") and (
        "name" not in table or ("value" in table) == ("expr" in table)
    ):
        raise PerflabError(f"{where}: transform {op} needs `name` and one of `value`, `expr`")
    if "expr" in table:
        try:
            ast.parse(str(table["expr"]), mode="eval")
        except SyntaxError:
            raise PerflabError(f"{where}: transform expr {table['expr']!r} is not Python") from None
    if op == "set_default" and not table.get("function"):
        raise PerflabError(f"{where}: transform set_default needs `function`")
    if op in ("replace_function", "add_statement", "replace_module", "add_to_loop"):
        _check_code(op, table, where)
    return Transform(
        package=table["package"],
        op=op,
        module=table["module"],
        match=tuple(match),
        levels=tuple(levels),
        exclude=tuple(str(x) for x in table.get("exclude", [])),
        function=table.get("function"),
        name=table.get("name"),
        value=table["expr"] if "expr" in table else table.get("value"),
        extra={"expr": True} if "expr" in table else {},
    )


@dataclass
class Site:
    """One place a transform can act on: a logger call, with the names that identify it."""

    module: str
    function: str
    lineno: int
    end_lineno: int
    col: int
    level: str
    text: str
    node: ast.Expr

    def message(self) -> str:
        """The call's literal message parts (placeholders dropped), for names and matching."""
        first = self.node.value.args[0] if self.node.value.args else None  # type: ignore[attr-defined]
        parts: list[str] = []
        for n in ast.walk(first) if first is not None else []:
            if isinstance(n, ast.Constant) and isinstance(n.value, str):
                parts.append(n.value)
        return " ".join(" ".join(parts).split())


def log_sites(source: str, module: str, levels: tuple[str, ...] = LEVELS) -> list[Site]:
    """Every logger call statement of ``source`` at ``levels``, with its enclosing function."""
    tree = ast.parse(source)
    out: list[Site] = []
    segment = _segmenter(source)

    def visit(node: ast.AST, scope: list[str]) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                visit(child, [*scope, child.name])
                continue
            level = _log_level(child)
            if level in levels and isinstance(child, ast.Expr):
                assert child.end_lineno is not None
                out.append(
                    Site(
                        module=module,
                        function=".".join(scope) or "<module>",
                        lineno=child.lineno,
                        end_lineno=child.end_lineno,
                        col=child.col_offset,
                        level=level or "",
                        text=segment(child),
                        node=child,
                    )
                )
            visit(child, scope)

    visit(tree, [])
    return sorted(out, key=lambda s: s.lineno)


def _segmenter(source: str) -> Callable[[ast.stmt], str]:
    """``ast.get_source_segment`` with the source split once: it splits the whole source on
    every call, which made a module with hundreds of logger calls quadratic."""
    # the line ends ast counts (not str.splitlines', which also breaks at \f and others)
    lines = [ln.encode() for ln in re.split(r"(?<=\r\n)|(?<=\n)|(?<=\r)(?!\n)", source)]

    def segment(node: ast.stmt) -> str:
        assert node.end_lineno is not None and node.end_col_offset is not None
        first, last = node.lineno - 1, node.end_lineno - 1
        if first == last:
            return lines[first][node.col_offset : node.end_col_offset].decode()
        middle = b"".join(lines[first + 1 : last])
        return (
            lines[first][node.col_offset :] + middle + lines[last][: node.end_col_offset]
        ).decode()

    return segment


def _log_level(node: ast.AST) -> str | None:
    if not (isinstance(node, ast.Expr) and isinstance(node.value, ast.Call)):
        return None
    func = node.value.func
    if not isinstance(func, ast.Attribute) or func.attr not in LEVELS:
        return None
    owner = func.value
    name = owner.id if isinstance(owner, ast.Name) else getattr(owner, "attr", None)
    return func.attr if name in LOGGER_NAMES else None


def _selected(t: Transform, site: Site) -> bool:
    if t.function and not fnmatch.fnmatchcase(site.function, t.function):
        return False
    if any(x in site.text for x in t.exclude):
        return False
    return not t.match or any(m in site.text for m in t.match)


def apply(t: Transform, source: str, module: str) -> tuple[str, int]:
    """``source`` of ``module`` with ``t`` applied, and how many places it changed."""
    if t.op == "remove_log_calls":
        sites = [s for s in log_sites(source, module, t.levels) if _selected(t, s)]
        return _replace(source, [(s, "pass  # perflab: log call removed") for s in sites])
    if t.op == "lazy_log_calls":
        edits = []
        for s in log_sites(source, module, t.levels):
            new = _lazy(s.node) if _selected(t, s) else None
            if new is not None:
                edits.append((s, new))
        return _replace(source, edits)
    if t.op == "set_default":
        return _set_default(t, source)
    if t.op == "replace_function":
        return replace_function(source, t.function or "", str(t.value))
    if t.op == "add_statement":
        return add_statement(source, str(t.value))
    if t.op == "add_to_loop":
        return add_to_loop(source, t.function or "", str(t.value))
    if t.op == "replace_module":
        return str(t.value), int(str(t.value) != source)
    return _set_constant(t, source)


def _replace(source: str, edits: list[tuple[Site, str]]) -> tuple[str, int]:
    """Each site's statement (all its lines) replaced by one line, from the bottom up."""
    lines = source.splitlines(keepends=True)
    for site, new in sorted(edits, key=lambda e: e[0].lineno, reverse=True):
        lines[site.lineno - 1 : site.end_lineno] = [" " * site.col + new + "\n"]
    return "".join(lines), len(edits)


def _lazy(node: ast.Expr) -> str | None:
    """``logger.x(f"a {b}")`` / ``logger.x("a {}".format(b))`` -> ``logger.x("a %s", b)``:
    the string is built only when the record is emitted. None when the call is already lazy
    or too intricate to rewrite exactly (format specs, keyword placeholders)."""
    call = node.value
    assert isinstance(call, ast.Call)
    if not call.args:
        return None
    first = call.args[0]
    args: list[ast.expr] = []
    if isinstance(first, ast.JoinedStr):
        fmt = ""
        for part in first.values:
            if isinstance(part, ast.Constant):
                fmt += str(part.value).replace("%", "%%")
            elif isinstance(part, ast.FormattedValue) and part.format_spec is None:
                fmt += "%r" if part.conversion == ord("r") else "%s"
                args.append(part.value)
            else:
                return None
    elif (
        isinstance(first, ast.Call)
        and isinstance(first.func, ast.Attribute)
        and first.func.attr == "format"
        and isinstance(first.func.value, ast.Constant)
        and isinstance(first.func.value.value, str)
        and not first.keywords
    ):
        template = first.func.value.value
        if template.count("{}") != len(first.args) or template.count("{") != len(first.args):
            return None
        fmt, args = template.replace("%", "%%").replace("{}", "%s"), list(first.args)
    else:
        return None
    new = ast.Call(call.func, [ast.Constant(fmt), *args, *call.args[1:]], call.keywords)
    return ast.unparse(new)


def _set_default(t: Transform, source: str) -> tuple[str, int]:
    tree = ast.parse(source)
    edits: list[tuple[ast.expr, str]] = []
    for fn, qual in _functions(tree):
        if not fnmatch.fnmatchcase(qual, t.function or ""):
            continue
        a = fn.args
        positional = [*a.posonlyargs, *a.args]
        pairs = list(zip(positional[len(positional) - len(a.defaults) :], a.defaults, strict=True))
        pairs += [(k, d) for k, d in zip(a.kwonlyargs, a.kw_defaults, strict=True) if d]
        new = str(t.value) if t.extra.get("expr") else repr(t.value)
        edits += [(d, new) for arg, d in pairs if arg.arg == t.name]
    return replace_exprs(source, edits)


def _set_constant(t: Transform, source: str) -> tuple[str, int]:
    """The value assigned to ``name``: at module level (``NAME``), in a class (``Class.NAME``),
    or, with ``function``, wherever that function assigns it (``poll_period``,
    ``self._tasks_in_progress``)."""
    tree = ast.parse(source)
    if t.function:
        name = t.name or ""
        scopes: list[list[ast.stmt]] = [
            [n for n in ast.walk(fn) if isinstance(n, ast.stmt)]
            for fn, qual in _functions(tree)
            if fnmatch.fnmatchcase(qual, t.function)
        ]
    else:
        owner, _, name = (t.name or "").rpartition(".")
        body = tree.body
        if owner:  # Class.ATTR: a class-level assignment
            body = next((n.body for n in tree.body if isinstance(n, ast.ClassDef)
                         and n.name == owner), [])  # fmt: skip
        scopes = [body]
    edits: list[tuple[ast.expr, str]] = []
    for node in (n for scope in scopes for n in scope):
        targets = node.targets if isinstance(node, ast.Assign) else (
            [node.target] if isinstance(node, ast.AnnAssign) else [])  # fmt: skip
        value = getattr(node, "value", None)
        if value is not None and any(ast.unparse(tg) == name for tg in targets):
            edits.append((value, t.value if t.extra.get("expr") else repr(t.value)))
    return replace_exprs(source, edits)


def _functions(tree: ast.AST) -> list[tuple[ast.FunctionDef | ast.AsyncFunctionDef, str]]:
    out: list[tuple[ast.FunctionDef | ast.AsyncFunctionDef, str]] = []

    def visit(node: ast.AST, scope: list[str]) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                out.append((child, ".".join([*scope, child.name])))
                visit(child, [*scope, child.name])
            elif isinstance(child, ast.ClassDef):
                visit(child, [*scope, child.name])

    visit(tree, [])
    return out


def replace_exprs(source: str, edits: list[tuple[ast.expr, str]]) -> tuple[str, int]:
    """Each expression's exact source span replaced by new text (bottom-up by position)."""
    lines = source.splitlines(keepends=True)
    offsets = [0]
    for ln in lines:
        offsets.append(offsets[-1] + len(ln.encode()))
    data = source.encode()
    spans = []
    for node, new in edits:
        assert node.end_lineno is not None and node.end_col_offset is not None
        start = offsets[node.lineno - 1] + node.col_offset
        end = offsets[node.end_lineno - 1] + node.end_col_offset
        spans.append((start, end, new))
    for start, end, new in sorted(spans, reverse=True):
        data = data[:start] + new.encode() + data[end:]
    return data.decode(), len(spans)


def slug(text: str, n: int = 5) -> str:
    """A short stable name part from a message: its first ``n`` words, lower case."""
    words = re.findall(r"[A-Za-z0-9]+", text.lower())
    return "_".join(words[:n]) or "call"
