"""Proof by the value Dask itself resolved: a treated ``dask.config`` key (one the hook sets,
or one a ``DASK_*`` variable of an env factor sets, as explain's ``dcfg_*`` factors do) is
proven by ``dask.config.get`` in each process that imported Dask, read back where Dask uses
it (``hook/dask_hook.py``: at the first ``LocalCluster``, ``Scheduler``, ``Worker`` or
``Client``, else at exit). A variable a process saw is not enough: the program's own
``dask.config.set`` or a config file can still win, and then the run fails with what Dask
resolved instead.
"""

from __future__ import annotations

import ast
import json
from typing import Any

#: Dask's variables that are not configuration keys (where its files are, what a spawned
#: process inherits).
NOT_KEYS = ("DASK_CONFIG", "DASK_ROOT_CONFIG", "DASK_INTERNAL_INHERIT_CONFIG")
MAX_FACTS = 8


def dask_key(var: str) -> str | None:
    """The ``dask.config`` key a ``DASK_*`` variable sets, as Dask reads it (``__`` nests,
    lower case; Dask's ``get`` takes ``_`` and ``-`` in a key alike), or None."""
    if not var.startswith("DASK_") or var in NOT_KEYS or len(var) == len("DASK_"):
        return None
    return var[len("DASK_") :].lower().replace("__", ".")


def interpret(value: str) -> Any:
    """A ``DASK_*`` variable's value as Dask reads it (``dask.config.interpret_value``)."""
    try:
        return ast.literal_eval(value)
    except (SyntaxError, ValueError, TypeError, MemoryError, RecursionError):
        pass
    return {"none": None, "null": None, "false": False, "true": True}.get(value.lower(), value)


def dask_env_ops(env: dict[str, Any]) -> list[dict[str, Any]]:
    """The hook's read-back operations for an env factor's ``DASK_*`` variables."""
    out = []
    for var, value in env.items():
        key = dask_key(str(var))
        if key:
            out.append({"on": "dask_env", "var": str(var), "key": key, "value": str(value)})
    return out


def _same(a: Any, b: Any) -> bool:
    # as JSON: True is not 1, a tuple is its list (facts are read back from JSON)
    return json.dumps(a, sort_keys=True, default=repr) == json.dumps(
        b, sort_keys=True, default=repr
    )


def judge_resolved(
    ops: list[dict[str, Any]], facts: list[dict[str, Any]], required: bool = True
) -> tuple[list[dict[str, Any]], list[str]]:
    """Where each treated key resolved to its treated value (old: what Dask would have
    resolved without the treatment; new: what it resolved), and the causes of a process that
    resolved another value, or (``required``) of a key no process resolved."""
    resolved = [f for f in facts if f.get("fact") == "dask_config"]
    where: list[dict[str, Any]] = []
    causes: list[str] = []
    for op in ops:
        key = op["key"]
        want = interpret(op["value"]) if op.get("on") == "dask_env" else op["value"]
        seen = [f for f in resolved if key in (f.get("values") or {})]
        if not seen and required:
            causes.append(
                f"no Python process of the command resolved dask config {key!r} "
                "(none imported dask)"
            )
        bad = [f for f in seen if not _same(f["values"][key], want)]
        if bad:
            f = bad[0]
            causes.append(
                f"{f.get('argv0')} (pid {f.get('pid')}) resolved dask config {key!r} = "
                f"{f['values'][key]!r}, not {want!r}"
            )
            continue
        for f in seen[:MAX_FACTS]:
            where.append({
                "process": {"pid": f.get("pid"), "argv0": f.get("argv0")},
                "object": "dask.config", "option": key,
                "old": (f.get("untreated") or {}).get(key), "new": f["values"][key],
                "resolved_at": f.get("at"),
                **({"via": op["var"]} if op.get("var") else {}),
            })  # fmt: skip
    return where, causes
