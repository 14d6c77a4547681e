"""Regenerate the built-in catalog's Parsl source patches for the installed Parsl.

    .venv/bin/python tools/make_parsl_patches.py

Each patch is a unified diff against site-packages (paths ``a/parsl/...``), made by editing
the source through its AST, so a new Parsl version needs only a re-run and a review.  The
catalog pins the Parsl version the patches were made for.
"""

from __future__ import annotations

import ast
import difflib
import importlib.metadata
from collections.abc import Callable
from pathlib import Path

import parsl

SITE = Path(parsl.__file__).resolve().parent.parent
OUT = Path(__file__).resolve().parent.parent / "src" / "perflab" / "catalogs" / "patches"

DFK = "parsl/dataflow/dflow.py"
POOL = "parsl/executors/high_throughput/process_worker_pool.py"

#: Per-task submit-side log statements (emitted for every task, several times).
SUBMIT_BIGLOGS = [
    "changing state from",
    "initializing state to",
    "launched on executor",
    "will be sent to executor",
    "Added output dependencies",
    "Adding output dependencies",
    "Gathering dependencies",
    "Gathered dependencies",
    "submitted for App",
    "has AppFuture",
    "Not performing input staging",
    "Not performing output staging",
]
#: Per-task worker-pool log statements.
POOL_LOGS = [
    "Got executor tasks",
    "Result sent to interchange",
    "No incoming tasks",
    "Result received from worker",
    "Received executor task",
    "Completed executor task",
    "All processing finished for executor task",
]

Edit = Callable[[ast.Call, list[str]], str | None]


def log_calls(tree: ast.AST) -> list[ast.Expr]:
    out = []
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Expr)
            and isinstance(node.value, ast.Call)
            and isinstance(node.value.func, ast.Attribute)
            and isinstance(node.value.func.value, ast.Name)
            and node.value.func.value.id == "logger"
            and node.value.func.attr in ("debug", "info")
        ):
            out.append(node)
    return out


def rewrite(rel: str, edit: Callable[[ast.Expr, str], str | None]) -> tuple[str, str]:
    src = (SITE / rel).read_text()
    lines = src.splitlines(keepends=True)
    stmts = sorted(log_calls(ast.parse(src)), key=lambda n: n.lineno, reverse=True)
    for node in stmts:
        text = "".join(lines[node.lineno - 1 : node.end_lineno])
        new = edit(node, text)
        if new is not None:
            indent = " " * node.col_offset
            lines[node.lineno - 1 : node.end_lineno] = [f"{indent}{new}\n"]
    return src, "".join(lines)


def remove_matching(needles: list[str]) -> Callable[[ast.Expr, str], str | None]:
    def edit(node: ast.Expr, text: str) -> str | None:
        return "pass  # perflab: log line removed" if any(n in text for n in needles) else None

    return edit


def lazy(node: ast.Expr, text: str) -> str | None:
    """``logger.x(f"a {b}")`` / ``logger.x("a {}".format(b))`` -> ``logger.x("a %s", b)``."""
    call = node.value
    assert isinstance(call, ast.Call)
    if not call.args:
        return None
    first = call.args[0]
    fmt: str
    args: list[ast.expr]
    if isinstance(first, ast.JoinedStr):
        fmt, args = "", []
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
        and "{}" in first.func.value.value
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


def diff(rel: str, before: str, after: str) -> str:
    return "".join(
        difflib.unified_diff(
            before.splitlines(keepends=True),
            after.splitlines(keepends=True),
            f"a/{rel}",
            f"b/{rel}",
            n=3,
        )
    )


def write(name: str, parts: list[tuple[str, Callable[[ast.Expr, str], str | None]]]) -> None:
    text = ""
    for rel, edit in parts:
        before, after = rewrite(rel, edit)
        text += diff(rel, before, after)
    (OUT / name).write_text(text)
    print(f"{name}: {text.count(chr(10) + '-')} lines removed/changed")


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    print(f"parsl {importlib.metadata.version('parsl')} at {SITE}")
    write("src_submit_biglogs_remove.diff", [(DFK, remove_matching(SUBMIT_BIGLOGS))])
    write("src_pool_logs_remove.diff", [(POOL, remove_matching(POOL_LOGS))])
    write("src_lazy_logs.diff", [(DFK, lazy), (POOL, lazy)])


if __name__ == "__main__":
    main()
