"""The source change between two releases, split into function-level changes that can each be
reverted in the newer release (B) as a transform factor.

A *unit* is a function or method whose syntax tree differs between A and B (docstrings and
formatting ignored), a function that A has and B lost, or a module-level constant that
changed. Each unit's revert is a ``replace_function`` (A's ``def`` in place of B's, or added
back) or a ``set_constant`` transform. Units that cannot be reverted alone are grouped with
what they need, by rules one can check by reading the two sources:

* a reverted function that names a function A has and B lost (or one whose parameters
  changed) is grouped with that function's revert (callers and callee change together);
* a reverted function that names a module-level name B no longer defines gets A's
  definition back (an import, an assignment) in the same factor;
* a reverted function that uses a name (an attribute, a keyword) no module of B on the path
  has goes with the units whose A version defines it; a unit whose B version defined names
  its A version does not goes with the units whose B version uses them.

Module-level statements that are none of these (a changed import nothing reverted uses, a
class's bases) are listed, not reverted. Whether each factor imports is checked by
``plan.py`` before any run; one that does not is listed and left out.
"""

from __future__ import annotations

import ast
import copy
import fnmatch
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from perflab.factors.code_ops import shift
from perflab.factors.sources import modules
from perflab.factors.transforms import replace_exprs

#: Modules on Parsl's measured path (executor, interchange, worker pool, data flow kernel,
#: the job and serialisation layers they call on every task).
PARSL_PATH = (
    "parsl.executors.high_throughput*",
    "parsl.executors.base",
    "parsl.executors.status_handling",
    "parsl.dataflow*",
    "parsl.jobs*",
    "parsl.serialize*",
    "parsl.providers.local*",
    "parsl.launchers*",
    "parsl.utils",
    "parsl.config",
    "parsl.process_loggers",
    "parsl.log_utils",
)


@dataclass
class Unit:
    """One function-level change: ``qualname`` in ``module``; ``a_text`` is A's source."""

    module: str
    qualname: str
    kind: str  # changed | lost (in A only) | constant
    a_text: str
    lines: int  # changed lines (A's and B's sizes, a rough measure)
    refs: set[str] = field(default_factory=set)
    names: set[str] = field(default_factory=set)  # bare names only (calls of functions)
    defs_a: set[str] = field(default_factory=set)  # names A's version defines (self.x = …)
    defs_b: set[str] = field(default_factory=set)
    refs_b: set[str] = field(default_factory=set)
    sig_changed: bool = False
    needs: list[str] = field(default_factory=list)  # A's module-level statements it needs

    @property
    def key(self) -> str:
        return f"{self.module}:{self.qualname}"

    def transforms(self, package: str) -> list[dict[str, Any]]:
        if self.kind == "constant":
            out = [
                {
                    "package": package,
                    "op": "set_constant",
                    "module": self.module,
                    "name": self.qualname,
                    "expr": self.a_text,
                }
            ]
        else:
            out = [
                {
                    "package": package,
                    "op": "replace_function",
                    "module": self.module,
                    "function": self.qualname,
                    "value": self.a_text,
                }
            ]
        out += [
            {"package": package, "op": "add_statement", "module": self.module, "value": s}
            for s in self.needs
        ]
        return out


@dataclass
class Group:
    """One factor: units reverted together."""

    name: str
    units: list[Unit]
    why: str = ""  # why these go together ("" for a single unit)

    def transforms(self, package: str) -> list[dict[str, Any]]:
        return [t for u in self.units for t in u.transforms(package)]

    def to_dict(self) -> dict[str, Any]:
        return {
            "factor": self.name,
            "units": [u.key for u in self.units],
            "why": self.why,
            "lines": sum(u.lines for u in self.units),
        }


def _norm(node: ast.AST) -> str:
    """The node's tree without positions and docstrings: what the code does."""
    node = copy.deepcopy(node)
    for n in ast.walk(node):
        body = getattr(n, "body", None)
        if (
            isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
            and body
            and isinstance(body[0], ast.Expr)
            and isinstance(body[0].value, ast.Constant)
            and isinstance(body[0].value.value, str)
        ):
            n.body = body[1:] or [ast.Pass()]
    return ast.dump(node, include_attributes=False)


def _defs(tree: ast.Module) -> dict[str, ast.FunctionDef | ast.AsyncFunctionDef]:
    """Functions and methods by qualified name (nested functions belong to their function)."""
    out: dict[str, ast.FunctionDef | ast.AsyncFunctionDef] = {}

    def visit(body: list[ast.stmt], scope: list[str]) -> None:
        for n in body:
            if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef):
                out[".".join([*scope, n.name])] = n
            elif isinstance(n, ast.ClassDef):
                visit(n.body, [*scope, n.name])

    visit(tree.body, [])
    return out


def _top_names(tree: ast.Module) -> dict[str, ast.stmt]:
    """Module-level names and the statement that defines each."""
    out: dict[str, ast.stmt] = {}
    for n in tree.body:
        if isinstance(n, ast.Import | ast.ImportFrom):
            for alias in n.names:
                out[(alias.asname or alias.name).split(".")[0]] = n
        elif isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            out[n.name] = n
        elif isinstance(n, ast.Assign | ast.AnnAssign):
            targets = n.targets if isinstance(n, ast.Assign) else [n.target]
            for t in targets:
                if isinstance(t, ast.Name):
                    out[t.id] = n
    return out


def _refs(node: ast.AST) -> set[str]:
    out = set()
    for n in ast.walk(node):
        if isinstance(n, ast.Name):
            out.add(n.id)
        elif isinstance(n, ast.Attribute):
            out.add(n.attr)
    return out


def _defines(node: ast.AST) -> set[str]:
    """Names a function makes exist for others: attributes it assigns (``self.x = …``),
    its parameters (keywords callers pass), the functions it defines."""
    out = set()
    for n in ast.walk(node):
        if isinstance(n, ast.Attribute) and isinstance(n.ctx, ast.Store):
            out.add(n.attr)
        elif isinstance(n, ast.arg):
            out.add(n.arg)
    return out


def vocabulary(sources: list[str]) -> set[str]:
    """Every name and attribute the given sources use or define."""
    out: set[str] = set()
    for src in sources:
        tree = ast.parse(src)
        out |= _refs(tree) | _defines(tree) | set(_top_names(tree))
        out |= {n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.ClassDef)}
    return out


def _source(src: str, node: ast.AST) -> str:
    """A def's text with its decorators, dedented."""
    lines = src.splitlines(keepends=True)
    first = min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", []))])  # type: ignore[attr-defined]
    text = "".join(lines[first - 1 : node.end_lineno])  # type: ignore[attr-defined]
    return shift(text, -int(node.col_offset))  # type: ignore[attr-defined]


def _size(node: ast.AST | None) -> int:
    return 0 if node is None else int(node.end_lineno or 0) - int(node.lineno) + 1  # type: ignore[attr-defined]


def module_units(module: str, src_a: str, src_b: str, keep_defaults: set[str]) -> list[Unit]:
    """The units of one module. ``keep_defaults``: qualified names whose keyword defaults are
    factors of their own (``defaults.py``), so their revert keeps B's defaults."""
    ta, tb = ast.parse(src_a), ast.parse(src_b)
    da, db = _defs(ta), _defs(tb)
    names_b = _top_names(tb)
    out = []
    for qual, fa in da.items():
        fb = db.get(qual)
        text = _source(src_a, fa)
        if fb is not None and qual in keep_defaults:
            text = _with_defaults(text, _source(src_b, fb))
            if _norm(ast.parse(text)) == _norm(ast.parse(_source(src_b, fb))):
                continue  # only defaults changed: those are factors already
        elif fb is not None and _norm(fa) == _norm(fb):
            continue
        u = Unit(module, qual, "changed" if fb else "lost", text, _size(fa) + _size(fb))
        u.refs = _refs(fa) - {fa.name}
        u.names = {n.id for n in ast.walk(fa) if isinstance(n, ast.Name)}
        u.defs_a = _defines(fa)
        if fb is not None:
            u.defs_b, u.refs_b = _defines(fb), _refs(fb)
        u.sig_changed = fb is None or _norm(fa.args) != _norm(fb.args)
        out.append(u)
    names_a = _top_names(ta)
    for name, stmt in names_a.items():
        other = names_b.get(name)
        if (
            isinstance(stmt, ast.Assign | ast.AnnAssign)
            and isinstance(other, type(stmt))
            and stmt.value is not None
            and other.value is not None
            and _norm(stmt.value) != _norm(other.value)
        ):
            text = ast.unparse(stmt.value)  # one line: it replaces an expression span
            out.append(Unit(module, name, "constant", text, _size(stmt) + _size(other)))
    for u in out:  # A's module-level definitions a reverted function names and B lacks
        for name in sorted(u.refs):
            need = names_a.get(name)
            if name in names_b or need is None or isinstance(need, ast.FunctionDef):
                continue
            text = ast.get_source_segment(src_a, need) or ast.unparse(need)
            if text not in u.needs:
                u.needs.append(text)
    return out


def _with_defaults(text_a: str, text_b: str) -> str:
    """A's function with B's keyword defaults (for the keywords both have)."""
    fa = ast.parse(text_a).body[0]
    fb = ast.parse(text_b).body[0]
    assert isinstance(fa, ast.FunctionDef | ast.AsyncFunctionDef)
    assert isinstance(fb, ast.FunctionDef | ast.AsyncFunctionDef)
    dflt_b = {a.arg: ast.get_source_segment(text_b, d) for a, d in _defaults(fb)}
    edits = []
    for arg, d in _defaults(fa):
        new = dflt_b.get(arg.arg)
        if new is not None:
            edits.append((d, new))
    return replace_exprs(text_a, edits)[0]


def _defaults(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> list[tuple[ast.arg, ast.expr]]:
    a = fn.args
    pos = [*a.posonlyargs, *a.args]
    pairs = list(zip(pos[len(pos) - len(a.defaults) :], a.defaults, strict=True))
    return pairs + [(k, d) for k, d in zip(a.kwonlyargs, a.kw_defaults, strict=True) if d]


def diff_units(
    dir_a: Path, dir_b: Path, package: str, globs: tuple[str, ...], keep_defaults: set[str]
) -> tuple[list[Unit], list[str]]:
    """Units over the modules matching ``globs``; and what is listed, not reverted (modules
    only A has)."""
    ma, mb = modules(dir_a, package), modules(dir_b, package)
    listed = []
    units: list[Unit] = []
    for mod in sorted(ma):
        if not any(fnmatch.fnmatchcase(mod, g) for g in globs):
            continue
        if mod not in mb:
            listed.append(f"{mod}: only in A (a module B removed; not reverted)")
            continue
        sa, sb = ma[mod].read_text(), mb[mod].read_text()
        if sa != sb:
            units += module_units(mod, sa, sb, keep_defaults)
    return units, listed


def path_vocabulary(pkg_dir: Path, package: str, globs: tuple[str, ...]) -> set[str]:
    """``vocabulary`` of a release's modules matching ``globs``."""
    mods = modules(pkg_dir, package)
    return vocabulary(
        [f.read_text() for m, f in mods.items() if any(fnmatch.fnmatchcase(m, g) for g in globs)]
    )


def group_units(units: list[Unit], vocab_b: set[str] | None = None) -> list[Group]:
    """Union of units that must be reverted together (see the module docstring);
    ``vocab_b``: every name B's modules on the path use or define (``vocabulary``)."""
    parent = {u.key: u.key for u in units}

    def find(k: str) -> str:
        while parent[k] != k:
            parent[k] = parent[parent[k]]
            k = parent[k]
        return k

    by_short: dict[str, list[Unit]] = {}
    for u in units:
        by_short.setdefault(u.qualname.rpartition(".")[2], []).append(u)
    own = {(u.module, u.qualname) for u in units if "." not in u.qualname}
    reasons: dict[str, list[str]] = {}
    for u in units:
        for name in u.refs:
            for v in by_short.get(name, []):
                # a method or a module's own function: by name in the same module; another
                # module's top-level function: when called by its bare (imported) name, and
                # the caller's module has no function of that name of its own
                bare = name in u.names and (u.module, name) not in own
                near = v.module == u.module or ("." not in v.qualname and bare)
                if v is not u and v.kind != "constant" and v.sig_changed and near:
                    parent[find(u.key)] = find(v.key)
                    reasons.setdefault(u.key, []).append(f"{u.qualname} calls {v.qualname}")
    if vocab_b is not None:
        for u in units:
            # A's version uses names B's package no longer has: it needs the units whose A
            # version defines them (a Config attribute, a keyword, a method's new name)
            need = u.refs - vocab_b
            # B's version defined names A's does not: the units whose B version uses them
            # must go back with it
            gone = u.defs_b - u.defs_a
            for v in units:
                if v is u or v.kind == "constant":
                    continue
                if need & v.defs_a or gone & v.refs_b:
                    parent[find(u.key)] = find(v.key)
                    what = sorted(need & v.defs_a or gone & v.refs_b)[:3]
                    reasons.setdefault(u.key, []).append(
                        f"{u.qualname} and {v.qualname} share {', '.join(what)}"
                    )
    members: dict[str, list[Unit]] = {}
    for u in units:
        members.setdefault(find(u.key), []).append(u)
    out = []
    for _root, us in sorted(members.items()):
        why = "; ".join(dict.fromkeys(r for u in us for r in reasons.get(u.key, [])))
        if any(u.kind == "lost" for u in us):
            why = (why + "; " if why else "") + "brings back functions B removed"
        out.append(Group(factor_name(us), us, why if len(us) > 1 else ""))
    return out


def factor_name(units: list[Unit]) -> str:
    """A stable name from the largest unit: ``hunk_<last module part>_<function>``."""
    u = max(units, key=lambda x: (x.lines, x.key))
    mod = u.module.rpartition(".")[2]
    name = re.sub(r"[^A-Za-z0-9_]", "_", f"hunk_{mod}_{u.qualname.replace('.', '_')}")
    return name[:90] + (f"_g{len(units)}" if len(units) > 1 else "")
